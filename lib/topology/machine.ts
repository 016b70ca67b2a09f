// Runs on: any thread. Owns: the structure of the simulated machine — how PEs
// are numbered and how far apart two PEs are (which link class, how many hops).
//
// PE numbering is structural and global: id = (sip * cubesPerSip + cube) * pesPerCube + pe,
// where `cube` is row-major in the SIP's cube mesh and `pe` is corner-major
// (corner index * pe_per_corner + k). Every thread derives the same numbering
// from the same topology, so ids can cross threads as plain integers.
// How SIPs are laid out and linked is the SIP topology kind's
// (lib/topology/kinds/<kind>.ts: its grid rule, and its fabric: ./fabric.ts).
import { KernbenchError, type PeAddress } from '../errors.js';
import { gridOrProblem, type SipGrid, type SipTopology } from './define-kind.js';
import { directionFabric, fabricOrProblem, type SipFabric } from './fabric.js';
import { sipKind } from './kind-registry.js';
import type { LinkClassName, Topology } from './schema.js';

export type PeCoord = PeAddress;

export interface Route {
  link: LinkClassName;
  hops: number;
}

export class Machine {
  readonly sips: number;
  /** The file's system.sips.topology: a shipped kind's name, or the file URL of a user's kind module. */
  readonly sipKind: Topology['system']['sips']['topology'];
  /** The kind's module (its grid rule, hops and neighbours). */
  readonly sipTopology: SipTopology;
  /** SIP grid from the kind's grid rule: the file's w x h for 2-D kinds; a count x 1 row for 1-D ones. */
  readonly sipGrid: SipGrid;
  /** The SIPs' physical links and routes (the kind's fabric, or its direction links). */
  readonly fabric: SipFabric;
  readonly cubeMesh: { w: number; h: number };
  readonly cubesPerSip: number;
  readonly pesPerCube: number;
  readonly pesPerSip: number;
  readonly totalPes: number;

  constructor(readonly topology: Topology) {
    const s = topology.system.sips;
    this.sips = s.count;
    this.sipKind = s.topology;
    this.sipTopology = sipKind(s.topology);
    const grid = gridOrProblem(this.sipTopology.grid({ count: s.count, w: s.w, h: s.h }));
    // The schema ran the same rule; a topology built in code may not have.
    if ('problem' in grid) throw new KernbenchError('ERR_INVALID_SIPS', `system.sips: ${grid.problem}`);
    this.sipGrid = Object.freeze({ ...grid.grid });
    this.fabric = sipFabricOf(this.sipTopology, this.sipGrid, s.count, s.params);
    this.cubeMesh = { ...topology.sip.cube_mesh };
    this.cubesPerSip = this.cubeMesh.w * this.cubeMesh.h;
    this.pesPerCube = topology.cube.pe_layout.corners.length * topology.cube.pe_layout.pe_per_corner;
    this.pesPerSip = this.cubesPerSip * this.pesPerCube;
    this.totalPes = this.sips * this.pesPerSip;
  }

  peId(c: PeCoord): number {
    if (c.sip < 0 || c.sip >= this.sips || c.cube < 0 || c.cube >= this.cubesPerSip || c.pe < 0 || c.pe >= this.pesPerCube) {
      throw new KernbenchError(
        'ERR_NO_SUCH_PE',
        `no such PE in a machine of ${this.sips} SIPs x ${this.cubesPerSip} cubes x ${this.pesPerCube} PEs, got (sip ${c.sip}, cube ${c.cube}, pe ${c.pe})`,
      );
    }
    return (c.sip * this.cubesPerSip + c.cube) * this.pesPerCube + c.pe;
  }

  coord(id: number): PeCoord {
    const pe = id % this.pesPerCube;
    const cubeGlobal = (id - pe) / this.pesPerCube;
    const cube = cubeGlobal % this.cubesPerSip;
    return { sip: (cubeGlobal - cube) / this.cubesPerSip, cube, pe };
  }

  describePe(id: number): string {
    const c = this.coord(id);
    return `PE (sip ${c.sip}, cube ${c.cube}, pe ${c.pe})`;
  }

  /** Hops between two SIPs on the SIP-level topology: a direction kind's shortest route, a switched kind's route. */
  sipHops(a: number, b: number): number {
    const k = this.sipTopology;
    return k.hops ? k.hops(a, b, this.sipGrid) : this.fabric.route(a, b).length;
  }

  /**
   * The bandwidth of the narrowest link a transfer from PE `from` to PE `to`
   * crosses, as a multiple of its class's (1 but on a fabric whose links differ:
   * a fat tree's leaf-spine links). Alone, a transfer runs at that link's rate.
   */
  routeBandwidthScale(from: number, to: number): number {
    const scale = this.fabric.bandwidthScale;
    if (scale === undefined) return 1;
    const a = this.coord(from).sip, b = this.coord(to).sip;
    let min = Infinity;
    for (const l of this.fabric.route(a, b)) min = Math.min(min, scale(l));
    return a === b ? 1 : min;
  }

  /** Manhattan hops between two cubes of one SIP's cube mesh. */
  cubeHops(a: number, b: number): number {
    const { w } = this.cubeMesh;
    return Math.abs((a % w) - (b % w)) + Math.abs(Math.floor(a / w) - Math.floor(b / w));
  }

  /** The link class and hop count a transfer from PE `from` to PE `to` pays. */
  route(from: number, to: number): Route {
    const a = this.coord(from), b = this.coord(to);
    if (a.sip !== b.sip) return { link: 'sip_sip', hops: this.sipHops(a.sip, b.sip) };
    if (a.cube !== b.cube) return { link: 'cube_cube', hops: this.cubeHops(a.cube, b.cube) };
    return { link: 'pe_pe', hops: 1 };
  }
}

/** The fabric of `kind` for the file's SIPs: its own (a switched kind, params parsed by its schema) or its direction links. */
function sipFabricOf(kind: SipTopology, grid: SipGrid, count: number, params: Readonly<Record<string, unknown>> | undefined): SipFabric {
  if (!kind.fabric) return directionFabric(kind, grid);
  // A kind's params schema is built on main only (a shipped kind's, decision 0228): elsewhere it gets them as main checked them.
  const parsed = kind.params ? kind.params.safeParse(params ?? {}) : { success: true as const, data: params ?? {} };
  if (!parsed.success) throw new KernbenchError('ERR_INVALID_SIPS', `system.sips.params: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}, got ${JSON.stringify(params)}`);
  const r = fabricOrProblem(kind.fabric(count, parsed.data as Record<string, unknown>));
  // The schema ran the same rule; a topology built in code may not have.
  if ('problem' in r) throw new KernbenchError('ERR_INVALID_SIPS', `system.sips: ${r.problem}`);
  return r.fabric;
}

// Runs on: any thread. Owns: the machine's physical links — a dense integer id
// for every directed link, its class (sip_sip / cube_cube / pe_pe), and the
// ordered list of links a transfer from one PE to another crosses (its route).
// Decision record: docs/decisions/0023-links-as-shared-resources.md.
//
// Link ids (dense from 0, so per-link state fits a Float64Array of `count`):
//
//   [0, S)        sip_sip    the SIP fabric's ids     (./fabric.ts) a direction kind's:
//                                                     sip * 4 + dir, the link leaving SIP
//                                                     `sip` in direction dir (0 E, 1 W, 2 N, 3 S);
//                                                     a switched kind's: its own numbering
//   [S, S + C)    cube_cube  S + cubeG * 4 + dir      the link leaving cube cubeG =
//                                                     sip * cubesPerSip + cube in dir
//   [S + C, end)  pe_pe      S + C + (cubeG * P + a) * P + b   PE a -> PE b of cube cubeG
//                                                     (a, b its local indices; a = b unused)
//   S = the fabric's linkCount (4 * sips for a direction kind),
//   C = 4 * sips * cubesPerSip, P = PEs per cube.
//
// A few ids name no link (a direction with no neighbour, a PE to itself): they
// are never on a route, and cost one unused slot each.
//
// Routes (the same class and hop count as Machine.route, so today's
// uncontended cost hops * alpha + bytes / beta is unchanged):
//   different SIPs   the SIP fabric's route (a direction kind's `route`, else
//                    bfsRoute over its neighbours; a switched kind's own, through
//                    its switches): sip_sip links only. The segments inside the
//                    SIPs (PE to the SIP's edge) are not modelled, as in the cost
//                    model today: a transfer between SIPs pays the SIP hops only.
//   same SIP, different cubes   the cube mesh (no wrap), x first then y:
//                    cube_cube links.
//   same cube        one private pe_pe link per ordered pair of PEs (a crossbar):
//                    a PE's sends to different PEs of its cube never share a link,
//                    as its DMA channels per direction never share a timeline.
import { PairCache } from './pair-cache.js';
import { dimensionOrderRoute, EAST, NORTH, SOUTH, WEST } from './define-kind.js';
import type { Machine } from './machine.js';
import type { LinkClassName } from './schema.js';

/** The classes in id-range order. */
export const LINK_CLASSES: readonly LinkClassName[] = ['sip_sip', 'cube_cube', 'pe_pe'];

/** One directed link, decoded (for tests, traces and the SimGrid platform generator). */
export interface LinkEnds {
  cls: LinkClassName;
  /** Level-local ends: fabric nodes (sip_sip: SIPs, then switches), global cube indices (cube_cube), global PE ids (pe_pe). */
  from: number;
  to: number;
}

export class Links {
  /** Number of link ids (some unused): the size of a per-link state array. */
  readonly count: number;
  private readonly sipBase = 0;
  private readonly cubeBase: number;
  private readonly peBase: number;
  private readonly P: number;
  // Routes are asked for per transfer: memoised per pair, bounded (an all-to-all's PEs talk to every PE).
  private readonly routes: PairCache<readonly number[]>;

  constructor(readonly machine: Machine) {
    const m = machine;
    this.P = m.pesPerCube;
    this.cubeBase = m.fabric.linkCount;
    this.peBase = this.cubeBase + 4 * m.sips * m.cubesPerSip;
    this.count = this.peBase + m.sips * m.cubesPerSip * this.P * this.P;
    this.routes = new PairCache(m.totalPes);
  }

  /**
   * GB/s of every link id: the link model's capacities (bandwidthOf each), made once: a
   * channel asks for it when its kernel's peer changes (lib/ipcq/link-timing.ts), at p = 1024
   * once a kernel over a thousand links. Shared, so read only.
   */
  bandwidths(): ArrayLike<number> {
    if (this.gb === undefined) {
      this.gb = new Float64Array(this.count);
      for (let l = 0; l < this.count; l++) this.gb[l] = this.bandwidthOf(l);
    }
    return this.gb;
  }
  private gb: Float64Array | undefined;

  /** GB/s of link `id`: its class's timing.links bandwidth, times the fabric's scale for a SIP link that has one. */
  bandwidthOf(id: number): number {
    const gb = this.machine.topology.timing.links[this.classOf(id)].bandwidth_gb_s;
    const scale = this.machine.fabric.bandwidthScale;
    return id < this.cubeBase && scale !== undefined ? gb * scale(id) : gb;
  }

  /** The SIP links, in order, a transfer from SIP `a` to SIP `b` crosses: any pair, neighbours or not. */
  sipRoute(a: number, b: number): readonly number[] {
    return this.machine.fabric.route(a, b);
  }

  /** The class of link `id` (its bandwidth and latency: the topology's timing.links[class]). */
  classOf(id: number): LinkClassName {
    if (id < this.cubeBase) return 'sip_sip';
    if (id < this.peBase) return 'cube_cube';
    return 'pe_pe';
  }

  /** The directed link from SIP `sip` in direction `dir` (a direction kind's fabric). */
  sipLink(sip: number, dir: number): number {
    return this.sipBase + sip * 4 + dir;
  }

  /** The directed link from global cube `cubeG` (sip * cubesPerSip + cube) in direction `dir`. */
  cubeLink(cubeG: number, dir: number): number {
    return this.cubeBase + cubeG * 4 + dir;
  }

  /** The private link from PE `from` to PE `to` of one cube (global ids). */
  peLink(from: number, to: number): number {
    const P = this.P;
    const cubeG = Math.floor(from / P);
    return this.peBase + (cubeG * P + (from % P)) * P + (to % P);
  }

  /** Link `id` decoded: its class and its two ends. */
  ends(id: number): LinkEnds {
    const m = this.machine;
    if (id < this.cubeBase) return { cls: 'sip_sip', ...m.fabric.ends(id) };
    if (id < this.peBase) {
      const k = id - this.cubeBase;
      const cubeG = Math.floor(k / 4);
      const sip = Math.floor(cubeG / m.cubesPerSip);
      const to = cubeStep(cubeG - sip * m.cubesPerSip, k % 4, m.cubeMesh);
      return { cls: 'cube_cube', from: cubeG, to: to < 0 ? -1 : sip * m.cubesPerSip + to };
    }
    const k = id - this.peBase;
    const P = this.P;
    const cubeG = Math.floor(k / (P * P));
    const a = Math.floor(k / P) % P, b = k % P;
    return { cls: 'pe_pe', from: cubeG * P + a, to: a === b ? -1 : cubeG * P + b };
  }

  /**
   * The links, in order, a transfer from PE `from` to PE `to` crosses (empty when from = to).
   * Shared by every caller, so read-only by its type; not frozen, because optimised code
   * reads a frozen array's elements through a generic call on Node 20's V8, and the reach
   * check reads a route's links for every piece (decision 0281).
   */
  route(from: number, to: number): readonly number[] {
    let r = this.routes.get(from, to);
    if (!r) {
      r = this.build(from, to);
      this.routes.set(from, to, r);
    }
    return r;
  }

  private build(from: number, to: number): readonly number[] {
    const m = this.machine;
    if (from === to) return [];
    const a = m.coord(from), b = m.coord(to);
    // The fabric's route, as it keeps it (frozen): between SIPs a route is sip_sip links only.
    if (a.sip !== b.sip) return m.fabric.route(a.sip, b.sip);
    if (a.cube !== b.cube) {
      const base = a.sip * m.cubesPerSip;
      const out: number[] = [];
      let c = a.cube;
      const dirs = dimensionOrderRoute(a.cube, b.cube, m.cubeMesh, false);
      for (let i = 0; i < dirs.length; i++) {
        const d = dirs[i];
        out.push(this.cubeLink(base + c, d));
        c = cubeStep(c, d, m.cubeMesh);
      }
      return out;
    }
    return [this.peLink(from, to)];
  }
}

/** The cube one step from `cube` in `dir` on a mesh without wrap, or -1 at an edge. */
function cubeStep(cube: number, dir: number, mesh: { w: number; h: number }): number {
  const x = cube % mesh.w, y = Math.floor(cube / mesh.w);
  const nx = x + (dir === EAST ? 1 : dir === WEST ? -1 : 0);
  const ny = y + (dir === SOUTH ? 1 : dir === NORTH ? -1 : 0);
  return nx < 0 || nx >= mesh.w || ny < 0 || ny >= mesh.h ? -1 : ny * mesh.w + nx;
}

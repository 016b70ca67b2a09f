// Runs on: any thread. Owns: the logical arrangement of CCL ranks in a
// collective (ring, torus, mesh, binary tree, PE/cube/SIP hierarchy) and who
// each rank's neighbour is per direction.
// A World travels inside a launch command; both ends of a ring derive the same
// neighbours from it, so no coordinator hop is needed to route IPCQ traffic.
//
// A direction names one IPCQ ring per PE (sender PE, direction) in the world's
// channel set (its process group's, lib/ccl/process-group.ts), so a rank has
// at most four neighbours and a kernel addresses them by direction. A World
// kind is therefore a direction mapping:
//
//   a SIP topology kind (ring_1d, torus_2d, mesh_2d_no_wrap, line_1d, ...)
//                    the kind module's neighbour(rank, dir, {w, h})
//                    (lib/topology/kinds/<kind>.ts: ranks arranged as that kind)
//   tree             binary heap in rank order: north = parent (r - 1) >> 1,
//                    east = left child 2r + 1, west = right child 2r + 2
//   hierarchical     a spanning tree of each SIP's PEs plus a ring of the SIPs'
//                    gateways (./hierarchy.ts builds the direction table)
//   none             no neighbours (plain launches)
//
// Kernels see the same arrangement without the PE ids as a WorldShape argument,
// so they can ask `neighbourRank(shape, tl.rank, dir)` which links exist.
import { portOf, type Port, type Ports } from '../kernel/ports.js';
import { DIRECTIONS, oppositeDir } from '../shm/layout.js';
import type { SipTopologyKind } from '../topology/define-kind.js';
import { sipKind } from '../topology/kind-catalog.js';
import { hierarchyPlan, RING_NEXT, RING_PREV, type HierarchyLevels } from './hierarchy.js';

/** A SIP topology kind's name, or one of the arrangements that are not kinds (kind names always hold a '_'). */
export type FlatWorldKind = SipTopologyKind | 'tree' | 'none';
export type WorldKind = FlatWorldKind | 'hierarchical';

/**
 * The arrangement of a collective's ranks, without their PEs. `w x h` ranks:
 * a 1-D kind (ring_1d) and tree are `n x 1`; a grid is `w x h` with rank = y * w + x;
 * hierarchical is `L x s` (L PEs on each of s SIPs, rank = sip position * L + local).
 */
export type WorldShape = { kind: FlatWorldKind; w: number; h: number } | { kind: 'hierarchical'; w: number; h: number; levels: HierarchyLevels };

/**
 * A shape plus the global PE id of each CCL rank (`pes.length === w * h`), and
 * the channel set its traffic uses: its process group's (absent: 0, the world's).
 */
export type World = WorldShape & { pes: number[]; set?: number };

export function ringWorld(pes: number[]): World {
  return { kind: 'ring_1d', w: pes.length, h: 1, pes };
}

/** The shape of a world (what kernels receive as an argument). */
export function shapeOf(world: World): WorldShape {
  const { pes: _pes, set: _set, ...shape } = world;
  return shape;
}

/** Number of ranks of a shape. */
export function shapeSize(shape: WorldShape): number {
  return shape.w * shape.h;
}

/** CCL rank of the neighbour of `rank` in direction `dir` (index into DIRECTIONS), or -1 where there is none. */
export function neighbourRank(shape: WorldShape, rank: number, dir: number): number {
  const n = shape.w * shape.h;
  switch (shape.kind) {
    case 'none':
      return -1;
    case 'tree': {
      let q = -1;
      if (dir === 2) q = rank === 0 ? -1 : (rank - 1) >> 1;
      else if (dir === 0) q = 2 * rank + 1;
      else if (dir === 1) q = 2 * rank + 2;
      return q < n ? q : -1;
    }
    case 'hierarchical': {
      const plan = hierarchyPlan(shape.levels, shape.h);
      const L = shape.w;
      const sip = Math.floor(rank / L);
      const local = rank % L;
      const nb = plan.neighbours[local][dir];
      if (nb === RING_NEXT) return ((sip + 1) % shape.h) * L + local;
      if (nb === RING_PREV) return ((sip - 1 + shape.h) % shape.h) * L + local;
      return nb < 0 ? -1 : sip * L + nb;
    }
    default:
      // A SIP topology kind: its module says (ERR_UNKNOWN_TOPOLOGY_KIND for a name no module has).
      return sipKind(shape.kind).neighbour(rank, dir, shape);
  }
}

/**
 * The direction in which `src` (the neighbour of `rank` in `dir`) sends to `rank`, or -1.
 * Matching is by address (DESIGN §5): prefer the opposite direction, else the one
 * direction in which the neighbour points back at `rank`; so a 2-rank ring (east
 * neighbour = west neighbour) cannot cross wires.
 */
function backDirection(world: WorldShape, rank: number, src: number, dir: number): number {
  const opp = oppositeDir(dir);
  if (neighbourRank(world, src, opp) === rank) return opp;
  for (let d = 0; d < DIRECTIONS.length; d++) if (neighbourRank(world, src, d) === rank) return d;
  return -1;
}

/** The PE that `rank` sends to in direction `dir`. */
export function sendPeer(world: World, rank: number, dir: number): number {
  const ports = portsOf(world, rank);
  return portOf(ports.send, dir, ports.why).pe;
}

/** Where `rank`'s receive from direction `dir` comes from: the neighbour's PE and the direction that neighbour sends in. */
export function recvSource(world: World, rank: number, dir: number): { pe: number; dir: number } {
  const ports = portsOf(world, rank);
  return portOf(ports.recv, dir, ports.why);
}

/** `rank`'s port table in `world`: what its kernel sends to and receives from per direction (lib/kernel/ports.ts). */
export function portsOf(world: World, rank: number): Ports {
  const send: Port[] = [];
  const recv: Port[] = [];
  let none = false;
  for (let d = 0; d < DIRECTIONS.length; d++) {
    const nb = neighbourRank(world, rank, d);
    if (nb < 0) {
      // Worded when used (portOf, from `why`).
      const e = { code: 'ERR_NO_NEIGHBOUR' as const };
      send.push(e);
      recv.push(e);
      none = true;
      continue;
    }
    send.push({ pe: world.pes[nb], dir: d });
    const back = backDirection(world, rank, nb, d);
    recv.push(
      back >= 0
        ? { pe: world.pes[nb], dir: back }
        : { code: 'ERR_IPCQ_WIRING', message: `CCL rank ${nb} never sends to rank ${rank} in a ${world.kind} world, got a receive from '${DIRECTIONS[d]}'` },
    );
  }
  const ports: Ports = { size: world.pes.length, set: world.set ?? 0, send, recv };
  if (none) ports.why = { rank, world: `${world.kind} world of ${world.w}x${world.h}` };
  return ports;
}

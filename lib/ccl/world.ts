// Runs on: any thread. Owns: the logical arrangement of CCL ranks in a
// collective (ring, torus, mesh) and who each rank's neighbour is per direction.
// A World travels inside a launch command; both ends of a ring derive the same
// neighbours from it, so no coordinator hop is needed to route IPCQ traffic.
import { KernbenchError } from '../errors.js';
import { DIRECTIONS, oppositeDir } from '../shm/layout.js';

export type WorldKind = 'ring_1d' | 'torus_2d' | 'mesh_2d_no_wrap' | 'none';

export interface World {
  kind: WorldKind;
  /** Grid width and height (ring_1d: n x 1). */
  w: number;
  h: number;
  /** Global PE id of each CCL rank. */
  pes: number[];
}

export function ringWorld(pes: number[]): World {
  return { kind: 'ring_1d', w: pes.length, h: 1, pes };
}

/** CCL rank of the neighbour of `rank` in direction `dir` (index into DIRECTIONS), or -1 where there is none. */
export function neighbourRank(world: World, rank: number, dir: number): number {
  const n = world.pes.length;
  switch (world.kind) {
    case 'none':
      return -1;
    case 'ring_1d':
      if (dir === 0) return (rank + 1) % n;
      if (dir === 1) return (rank - 1 + n) % n;
      return -1;
    case 'torus_2d':
    case 'mesh_2d_no_wrap': {
      const { w, h } = world;
      const x = rank % w, y = Math.floor(rank / w);
      const wrap = world.kind === 'torus_2d';
      let nx = x, ny = y;
      if (dir === 0) nx = x + 1;
      else if (dir === 1) nx = x - 1;
      else if (dir === 2) ny = y - 1;
      else ny = y + 1;
      if (wrap) {
        nx = (nx + w) % w;
        ny = (ny + h) % h;
      } else if (nx < 0 || nx >= w || ny < 0 || ny >= h) return -1;
      return ny * w + nx;
    }
    default: {
      const never: never = world.kind;
      throw new Error(`unknown world kind ${String(never)}`);
    }
  }
}

function noNeighbour(world: World, rank: number, dir: number): KernbenchError {
  return new KernbenchError(
    'ERR_INVALID_ARG',
    `CCL rank ${rank} has no ${DIRECTIONS[dir]} neighbour in a ${world.kind} world of ${world.w}x${world.h}, got direction '${DIRECTIONS[dir]}'`,
  );
}

/** The PE that `rank` sends to in direction `dir`. */
export function sendPeer(world: World, rank: number, dir: number): number {
  const r = neighbourRank(world, rank, dir);
  if (r < 0) throw noNeighbour(world, rank, dir);
  return world.pes[r];
}

/**
 * Where `rank`'s receive from direction `dir` comes from: the neighbour's PE and the
 * direction that neighbour sends in. Matching is by address (DESIGN §5): prefer the
 * opposite direction, else the one direction in which the neighbour points back at
 * `rank`; so a 2-rank ring (east neighbour = west neighbour) cannot cross wires.
 */
export function recvSource(world: World, rank: number, dir: number): { pe: number; dir: number } {
  const src = neighbourRank(world, rank, dir);
  if (src < 0) throw noNeighbour(world, rank, dir);
  const opp = oppositeDir(dir);
  if (neighbourRank(world, src, opp) === rank) return { pe: world.pes[src], dir: opp };
  for (let d = 0; d < DIRECTIONS.length; d++) {
    if (neighbourRank(world, src, d) === rank) return { pe: world.pes[src], dir: d };
  }
  throw new KernbenchError('ERR_IPCQ_WIRING', `CCL rank ${src} never sends to rank ${rank} in a ${world.kind} world, got a receive from '${DIRECTIONS[dir]}'`);
}

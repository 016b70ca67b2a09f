// Runs on: any thread (built by the launching host, read by the kernel on its
// executor). Owns: a kernel's port table — for each of the four directions,
// the PE it sends to and the (PE, direction) it receives from — and the
// channel set (its process group's rings) that carries the traffic.
//
// The host resolves the collective's world into ports at launch
// (lib/ccl/world.ts portsOf) and sends them in the launch command, so a kernel
// never needs the world or the code that arranges it. A direction with no
// neighbour holds the error that using it raises, decided by the host too.
import { KernbenchError, type ErrorCode } from '../errors.js';
import { peerRing } from '../shm/layout.js';

/** A usable port, or why the direction cannot be used. */
export type Port = { pe: number; dir: number } | { code: ErrorCode; message: string };

export interface Ports {
  /** Ranks in the kernel's world (tl.worldSize, tl.numPrograms()). */
  size: number;
  /**
   * The channel set whose rings carry its sends and receives: its process
   * group's (0 for the world and plain launches; lib/ccl/process-group.ts).
   */
  set: number;
  /** Per direction (DIRECTIONS order): where a send goes; `dir` is this PE's own direction. */
  send: Port[];
  /** Per direction: which neighbour and which of its directions a receive comes from. */
  recv: Port[];
  /**
   * The PE of each rank of the world, for addressing peers by rank (tl.peer):
   * present only in runs with ccl.peer_ranks (docs/decisions/0060-peer-channels.md).
   */
  pes?: readonly number[];
}

/** The port of `ports` in direction `d`, or the error the host recorded for it. */
export function portOf(table: Port[], d: number): { pe: number; dir: number } {
  const p = table[d];
  if ('code' in p) throw new KernbenchError(p.code, p.message);
  return p;
}

/** A rank of the kernel's world addressed directly (tl.peer(r)): sends and receives take it where they take a direction. */
export class Peer {
  constructor(readonly rank: number) {}
  toString(): string {
    return `peer ${this.rank}`;
  }
}

/**
 * The peer ring between rank `rank` (kernel `name` on PE `pe`) and `p` (decision 0060):
 * for a send, this PE's ring at distance (p - r) mod n and p's PE; for a receive, p's
 * ring at distance (r - p) mod n and p's PE. `d` is the direction (DMA channel) of that ring.
 */
export function peerRoute(ports: Ports, rank: number, p: Peer, use: 'send' | 'recv', ccl: { channel_sets: number; peer_ranks?: number }, name: string, pe: number): { d: number; set: number; pe: number } {
  const n = ports.size;
  const pes = ports.pes;
  if (pes === undefined || (ccl.peer_ranks ?? 0) < n) {
    throw new KernbenchError('ERR_NO_PEER_CHANNELS', `${name} on PE ${pe}: ${use} to ${p} needs peer channels for a world of ${n} ranks; run with ccl.peer_ranks >= ${n} (--set ccl.peer_ranks=${n}), got ccl.peer_ranks = ${ccl.peer_ranks ?? 0}`);
  }
  const k = use === 'send' ? (p.rank - rank + n) % n : (rank - p.rank + n) % n;
  const ring = peerRing(ccl.channel_sets, ccl.peer_ranks ?? 0, ports.set, k);
  return { d: ring.dir, set: ring.set, pe: pes[p.rank] };
}

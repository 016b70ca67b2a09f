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
import { DIRECTIONS, peerRing } from '../shm/layout.js';

/**
 * A usable port, or why the direction cannot be used: an error with its message, or
 * (no neighbour, a send the launch did not declare) its code alone, worded from the
 * table's `why` when the kernel uses the port (portOf). Worded by the host, every rank's
 * launch command carried two to five messages of ~100-200 bytes that its kernel kept
 * for its life, most never raised (~1 KB a rank at p = 1024; decision 0226).
 */
export type Port = { pe: number; dir: number } | { code: ErrorCode; message: string } | { code: 'ERR_NO_NEIGHBOUR' | 'ERR_SEND_UNDECLARED' };

/** What a port's error is worded from (portOf). */
export interface PortWhy {
  /** The CCL rank the table is for. */
  rank: number;
  /** Its world as a message names it: "ring_1d world of 1024x1". */
  world: string;
  /** The kernel, and the directions its launch declared it sends ('east, west'): with an undeclared port only. */
  kernel?: string;
  declared?: string;
}

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
  /** What its errors without a message are worded from. */
  why?: PortWhy;
}

/** The port of `table` (a table of `why`) in direction `d`, or the error the host recorded for it. */
export function portOf(table: Port[], d: number, why?: PortWhy): { pe: number; dir: number } {
  const p = table[d];
  if ('code' in p) throw new KernbenchError(p.code, 'message' in p ? p.message : portMessage(p.code, d, why));
  return p;
}

function portMessage(code: 'ERR_NO_NEIGHBOUR' | 'ERR_SEND_UNDECLARED', d: number, why: PortWhy | undefined): string {
  const dir = DIRECTIONS[d];
  if (why === undefined) return `direction '${dir}' cannot be used`;
  if (code === 'ERR_NO_NEIGHBOUR') return `CCL rank ${why.rank} has no ${dir} neighbour in a ${why.world}, got direction '${dir}'`;
  return `kernel '${why.kernel}' sent ${dir}, but its launch declared it sends ${why.declared} only (launchCollective's sends, or its algorithm's meta.sends); declare ${dir} too, got a send to '${dir}'`;
}

/** Where one send goes or one receive reads: this PE's direction (DMA channel) d, the channel set, and the peer's PE and its direction. */
export interface Route {
  d: number;
  set: number;
  pe: number;
  dir: number;
}

/**
 * Fill `r` with the route through this PE's direction `d` of `ports` for `use`,
 * and return it. A flow fills one Route for each of its operations, read at once:
 * a new object a call was allocated on every send and receive whenever V8 did not
 * inline the look-up (decision 0195).
 */
export function routeThrough(r: Route, ports: Ports, d: number, use: 'send' | 'recv'): Route {
  const port = portOf(use === 'send' ? ports.send : ports.recv, d, ports.why);
  r.d = d;
  r.set = ports.set;
  r.pe = port.pe;
  r.dir = port.dir;
  return r;
}

/**
 * A flow's Route (filled by routeThrough and peerRoute, read at once), which also keeps
 * the last route through a direction for each use: a ring's steps send one way and
 * receive the other, so their routes come from here instead of the port tables, whose
 * arrays and port objects were three cold loads a send at p = 1024 (decision 0265).
 */
export class RouteCache implements Route {
  d = 0;
  set = 0;
  pe = 0;
  dir = 0;
  /** A direction's channel set: the ports' own, whichever the use (routeThrough). */
  private dirSet = 0;
  private sendTo = '';
  private sendD = 0;
  private sendPe = 0;
  private sendDir = 0;
  private recvTo = '';
  private recvD = 0;
  private recvPe = 0;
  private recvDir = 0;

  /** This, set to `use`'s last route, if that went through direction `to`; else undefined (route it, then remember). */
  recall(to: string, use: 'send' | 'recv'): Route | undefined {
    if (use === 'send') {
      if (to !== this.sendTo) return undefined;
      this.d = this.sendD;
      this.pe = this.sendPe;
      this.dir = this.sendDir;
    } else {
      if (to !== this.recvTo) return undefined;
      this.d = this.recvD;
      this.pe = this.recvPe;
      this.dir = this.recvDir;
    }
    this.set = this.dirSet;
    return this;
  }

  /** Keep `r` (this, just filled by routeThrough) as `use`'s route through direction `to`; returns it. */
  remember(to: string, use: 'send' | 'recv', r: Route): Route {
    this.dirSet = r.set;
    if (use === 'send') {
      this.sendTo = to;
      this.sendD = r.d;
      this.sendPe = r.pe;
      this.sendDir = r.dir;
    } else {
      this.recvTo = to;
      this.recvD = r.d;
      this.recvPe = r.pe;
      this.recvDir = r.dir;
    }
    return r;
  }
}

/** A rank of the kernel's world addressed directly (tl.peer(r)): sends and receives take it where they take a direction. */
export class Peer {
  constructor(readonly rank: number) {}
  toString(): string {
    return `peer ${this.rank}`;
  }
}

/**
 * The peer ring between rank `rank` (kernel `name` on PE `pe`) and `p` (decision 0060),
 * filled into `r` as routeThrough does: for a send, this PE's ring at distance
 * (p - r) mod n and p's PE; for a receive, p's ring at distance (r - p) mod n and p's
 * PE. `d` (and the peer's `dir`) is the direction (DMA channel) of that ring.
 */
export function peerRoute(r: Route, ports: Ports, rank: number, p: Peer, use: 'send' | 'recv', ccl: { channel_sets: number; peer_ranks?: number }, name: string, pe: number): Route {
  const n = ports.size;
  const pes = ports.pes;
  if (pes === undefined || (ccl.peer_ranks ?? 0) < n) {
    throw new KernbenchError('ERR_NO_PEER_CHANNELS', `${name} on PE ${pe}: ${use} to ${p} needs peer channels for a world of ${n} ranks; run with ccl.peer_ranks >= ${n} (--set ccl.peer_ranks=${n}), got ccl.peer_ranks = ${ccl.peer_ranks ?? 0}`);
  }
  const k = use === 'send' ? (p.rank - rank + n) % n : (rank - p.rank + n) % n;
  const ring = peerRing(ccl.channel_sets, ccl.peer_ranks ?? 0, ports.set, k);
  r.d = r.dir = ring.dir;
  r.set = ring.set;
  r.pe = pes[p.rank];
  return r;
}

// Runs on: executor threads and the coordinator thread (wherever ./link-reach.ts checks
// a piece). Owns: the reach of the links of a ring, read as a range minimum over the
// ring's nodes kept per thread and class graph, in place of each link's bands
// (docs/decisions/0257-a-rings-reach-is-a-range-minimum.md).
//
// A class graph is a ring when its n >= 3 nodes each have links in from exactly their two
// neighbours, u - 1 and u + 1 (mod n), and every node has PEs. Then the levels behind a
// link are a run of consecutive nodes: behind v -> v + 1 ("down"), level k is node
// v - (k - 1); behind v -> v - 1 ("up"), node v + (k - 1); to level n - 1, the node next
// to the far end. Node u at level k bounds a flow's join by max(floor(u), h) + k * a
// (floor(u): the lowest floor of u's PEs; h: the horizon; a: the class's latency), and
//
//   down   k = c - u, c = v + 1 (or v + 1 + n for nodes past the wrap, u > v):
//          floor(u) + k a = (floor(u) - u a) + c a
//   up     k = u + c, c = 1 - v (or 1 - v + n for u < v):
//          floor(u) + k a = (floor(u) + u a) + c a
//
// so one tree of floor(u) - u a and one of floor(u) + u a serve every link of the ring.
// The caller asks only for the levels the horizon does not answer (h + k a < the piece's
// end), where max(floor(u), h) + k a reaches the end exactly when floor(u) + k a does: the
// trees hold floors alone, and an idle PE (floor -Infinity) there fails the check, as the
// definition does. A tree node keeps a lower bound of its nodes' lowest value: floors only
// rise while a kernel runs, and what runs next on a PE starts after its kernel ends, so a
// value read once stays a bound (the bands' rule, ./link-reach.ts). A query takes a node's
// kept bound and goes down only where it falls short of the piece's end; it reads a node's
// floors only at a leaf that falls short. A floor is read again only when some link's
// piece needs more than was read, whichever link read it first, and a band of 2^b levels
// costs about 2b kept values when they answer.
import type { SharedState } from '../shm/shared-state.js';
import { KeptMinima } from './kept-minima.js';

export class CycleFloors extends KeptMinima {
  /** Kept lower bounds of the lowest floor(u) - u * a over a tree node's nodes (down). */
  private readonly minus: Float64Array;
  /** The same of floor(u) + u * a (up). */
  private readonly plus: Float64Array;

  constructor(
    /** Nodes of the ring. */
    n: number,
    /** A node's PEs are [u * pesPer, (u + 1) * pesPer). */
    pesPer: number,
    /** The class's latency, a level's step. */
    readonly latencyPs: number,
  ) {
    super(n, pesPer);
    this.minus = this.tree();
    this.plus = this.tree();
  }

  /**
   * Over levels [lo, hi) behind link `from` -> `from + 1` (`down`) or `from` -> `from - 1`,
   * 1 <= lo and hi <= n: the lowest floor + level * a when every one is at least `endPs`
   * (Infinity when there is no level), else -Infinity (one may be earlier).
   */
  bound(sh: SharedState, from: number, down: boolean, lo: number, hi: number, endPs: number): number {
    if (lo >= hi) return Infinity;
    const n = this.n;
    const lat = this.latencyPs;
    let best = Infinity;
    // Each run of nodes with its c: its values are the tree's plus c * a, so it needs endPs - c * a of the tree.
    if (down) {
      // Nodes from - lo + 1 down to from - hi + 2; those below 0 wrap to the top.
      const top = from - lo + 1;
      const bottom = from - hi + 2;
      if (top >= 0) best = this.lowestOf(sh, this.minus, Math.max(0, bottom), top, endPs - (from + 1) * lat) + (from + 1) * lat;
      if (best >= endPs && bottom < 0) best = Math.min(best, this.lowestOf(sh, this.minus, bottom + n, Math.min(n - 1, top + n), endPs - (from + 1 + n) * lat) + (from + 1 + n) * lat);
    } else {
      // Nodes from + lo - 1 up to from + hi - 2; those past n - 1 wrap to the bottom.
      const first = from + lo - 1;
      const last = from + hi - 2;
      if (first <= n - 1) best = this.lowestOf(sh, this.plus, first, Math.min(n - 1, last), endPs - (1 - from) * lat) + (1 - from) * lat;
      if (best >= endPs && last >= n) best = Math.min(best, this.lowestOf(sh, this.plus, Math.max(0, first - n), last - n, endPs - (1 - from + n) * lat) + (1 - from + n) * lat);
    }
    return best >= endPs ? best : -Infinity;
  }

  /**
   * Level `k` (1 <= k < n) behind link `from` -> `from + 1` (`down`) or `from` -> `from - 1`,
   * read now: its node's lowest floor, kept in its leaves, plus k * a.
   */
  levelNow(sh: SharedState, from: number, down: boolean, k: number): number {
    const n = this.n;
    const u = down ? (((from - k + 1) % n) + n) % n : (from + k - 1) % n;
    const f = this.nodeFloor(sh, u);
    this.storeLeaf(this.size + u, u, f);
    return f + k * this.latencyPs;
  }

  protected storeLeaf(leaf: number, u: number, f: number): void {
    const at = u * this.latencyPs;
    if (f - at > this.minus[leaf]) this.minus[leaf] = f - at;
    if (f + at > this.plus[leaf]) this.plus[leaf] = f + at;
  }
}

/**
 * The ring of a class graph (node v's in-links are intoList[intoStart[v]] to
 * intoList[intoStart[v + 1]] - 1), or null when it is not one: fewer than 3 nodes, a node
 * without PEs (`withPes`: every node has pesPer), or a node whose in-links are not
 * exactly its two neighbours'.
 */
export function cycleOf(intoStart: Int32Array, intoList: Int32Array, nodes: number, withPes: boolean, pesPer: number, latencyPs: number): CycleFloors | null {
  if (nodes < 3 || !withPes) return null;
  for (let v = 0; v < nodes; v++) {
    const s = intoStart[v];
    if (intoStart[v + 1] - s !== 2) return null;
    const prev = (v + nodes - 1) % nodes;
    const next = (v + 1) % nodes;
    const x = intoList[s];
    const y = intoList[s + 1];
    if (!((x === prev && y === next) || (x === next && y === prev))) return null;
  }
  return new CycleFloors(nodes, pesPer, latencyPs);
}

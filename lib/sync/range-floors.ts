// Runs on: executor threads and the coordinator thread (wherever ./link-reach.ts checks
// a piece). Owns: the reach of a link whose levels are a few runs of consecutive nodes
// (a switched fabric's), read as range minima of the class's nodes' floors kept per
// thread, in place of the link's bands
// (docs/decisions/0258-a-switched-links-reach-is-a-few-range-minima.md).
//
// Behind link S -> w of one switch S, level 1 is S (no PEs) and level 2 every other SIP:
// the bands read all of them again whenever a piece needs more than they said, p floors a
// read, for every piece an all-to-all sends through the switch. Listed by level as runs
// of node ids (SIPs 0 .. w - 1 and w + 1 .. n - 1), each run is a range minimum: a
// segment tree of the lowest floor of each node's PEs, a tree node keeping a lower bound
// of the lowest under it (floors only rise while a kernel runs, and what runs next on a PE
// starts after its kernel ends: the bands' rule). A query takes the kept bounds of the
// run's canonical nodes and goes down only where one falls short; a floor is read again
// only when some piece needs more than was read, whichever link read it.
//
// A link's runs are found once, by a walk back from it (./link-reach.ts), and kept when
// there are at most MAX_RUNS of them: a leaf-spine fabric's levels are its leaves' SIPs,
// a few runs; a torus's are diamonds, a run a row, and keep their bands.
import type { SharedState } from '../shm/shared-state.js';
import { peFloor } from './pe-floor.js';

/** A link keeps its levels as runs when they are at most this many; else it reads bands. */
export const MAX_RUNS = 32;

/** The lowest floor of each node of a class graph with PEs, as a segment tree of kept lower bounds. */
export class RangeFloors {
  /** Leaves start here: node u is tree node size + u; nodes past n hold +Infinity. */
  private readonly size: number;
  private readonly t: Float64Array;
  /** Leaves read, each reading its node's PEs' floors. */
  leavesRead = 0;

  constructor(
    /** Nodes with PEs: 0 .. n - 1. */
    readonly n: number,
    /** A node's PEs are [u * pesPer, (u + 1) * pesPer). */
    private readonly pesPer: number,
  ) {
    let size = 1;
    while (size < n) size <<= 1;
    this.size = size;
    this.t = new Float64Array(2 * size).fill(Infinity);
    // Nothing read yet: every node's bound is -Infinity until a query needs it.
    this.t.fill(-Infinity, size, size + n);
    for (let i = size - 1; i >= 1; i--) this.t[i] = Math.min(this.t[2 * i], this.t[2 * i + 1]);
  }

  /**
   * Nodes [a, b]: their lowest floor when every one is at least `need`, else -Infinity.
   * Bottom-up over the tree's canonical nodes of [a, b]; one whose kept bound falls short
   * is read again from below (refresh). Methods with their arguments, not closures: they
   * run on the send path.
   */
  lowest(sh: SharedState, a: number, b: number, need: number): number {
    const t = this.t;
    let best = Infinity;
    for (let l = a + this.size, r = b + this.size + 1; l < r; l >>= 1, r >>= 1) {
      if (l & 1) {
        const v = t[l] >= need ? t[l] : this.refresh(sh, l, need);
        if (v < need) return -Infinity;
        if (v < best) best = v;
        l++;
      }
      if (r & 1) {
        r--;
        const v = t[r] >= need ? t[r] : this.refresh(sh, r, need);
        if (v < need) return -Infinity;
        if (v < best) best = v;
      }
    }
    return best;
  }

  /** Tree node `i`, whose kept bound fell short of `need`: its lowest read again from below when every one is at least `need`, else -Infinity. */
  private refresh(sh: SharedState, i: number, need: number): number {
    const t = this.t;
    if (i >= this.size) {
      this.leavesRead++;
      const u = i - this.size;
      let f = Infinity;
      for (let x = u * this.pesPer, e = x + this.pesPer; x < e; x++) f = Math.min(f, peFloor(sh, x));
      // A kept value never falls (a floor that fell to -Infinity: its kernel ended, after it).
      if (f > t[i]) t[i] = f;
      return t[i] >= need ? t[i] : -Infinity;
    }
    const left = t[2 * i] >= need ? t[2 * i] : this.refresh(sh, 2 * i, need);
    if (left < need) return -Infinity;
    const right = t[2 * i + 1] >= need ? t[2 * i + 1] : this.refresh(sh, 2 * i + 1, need);
    if (right < need) return -Infinity;
    // The children's kept bounds bound this node too, and have risen.
    const m = Math.min(left, right);
    if (m > t[i]) t[i] = m;
    return m;
  }
}

/**
 * Append level `level`'s nodes (any order) to `runs` as runs of consecutive ids, three
 * numbers a run (level, first node, last node): false when that makes more than MAX_RUNS.
 */
export function appendRuns(runs: number[], level: number, nodes: number[]): boolean {
  nodes.sort((x, y) => x - y);
  for (let i = 0; i < nodes.length; ) {
    let j = i;
    while (j + 1 < nodes.length && nodes[j + 1] === nodes[j] + 1) j++;
    runs.push(level, nodes[i], nodes[j]);
    if (runs.length > 3 * MAX_RUNS) return false;
    i = j + 1;
  }
  return true;
}

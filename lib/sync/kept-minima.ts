// Runs on: executor threads and the coordinator thread (wherever ./link-reach.ts checks
// a piece). Owns: segment trees of kept lower bounds over a class graph's nodes, and
// their query: the lowest value of a run of nodes when every one is at least a need,
// reading a node's PEs' floors again only where a kept bound falls short. What a leaf
// holds is its subclass's: a node's lowest floor (./range-floors.ts, decision 0258), or
// that floor less or plus the node's offset on a ring (./cycle-floors.ts, decision 0257).
//
// A tree node keeps a lower bound of the lowest value under it: floors only rise while a
// kernel runs, and what runs next on a PE starts after its kernel ends, so a value read
// once stays a bound (the bands' rule, ./link-reach.ts). A kept value never falls.
import type { SharedState } from '../shm/shared-state.js';
import { peFloor } from './pe-floor.js';

export abstract class KeptMinima {
  /** Leaves start here: node u is tree node size + u; nodes past n hold +Infinity. */
  protected readonly size: number;
  /** refresh's nodes on the way down: a tree is at most 32 levels deep. */
  private readonly path = new Int32Array(33);
  /** Leaves read, each reading its node's PEs' floors (what the trees save is counted by it). */
  leavesRead = 0;

  constructor(
    /** Nodes: 0 .. n - 1. */
    readonly n: number,
    /** A node's PEs are [u * pesPer, (u + 1) * pesPer). */
    private readonly pesPer: number,
  ) {
    let size = 1;
    while (size < n) size <<= 1;
    this.size = size;
  }

  /** A tree over the nodes with nothing read yet: every node's bound -Infinity until a query needs it. */
  protected tree(): Float64Array {
    const size = this.size;
    const t = new Float64Array(2 * size).fill(Infinity);
    t.fill(-Infinity, size, size + this.n);
    for (let i = size - 1; i >= 1; i--) t[i] = Math.min(t[2 * i], t[2 * i + 1]);
    return t;
  }

  /** Store what node u's lowest floor `f` makes of its leaf `leaf` in each tree (no lower than kept). */
  protected abstract storeLeaf(leaf: number, u: number, f: number): void;

  /**
   * Nodes [a, b] of tree `t`: their lowest value when every one is at least `need`, else
   * -Infinity. Bottom-up over the tree's canonical nodes of [a, b], about 2 log2(b - a) of
   * them; one whose kept bound falls short is read again from below (refresh). Methods
   * with their arguments, not closures: they run on the send path.
   */
  protected lowestOf(sh: SharedState, t: Float64Array, a: number, b: number, need: number): number {
    let best = Infinity;
    for (let l = a + this.size, r = b + this.size + 1; l < r; l >>= 1, r >>= 1) {
      if (l & 1) {
        if (t[l] < need && !this.refresh(sh, t, l, need)) return -Infinity;
        if (t[l] < best) best = t[l];
        l++;
      }
      if (r & 1) {
        r--;
        if (t[r] < need && !this.refresh(sh, t, r, need)) return -Infinity;
        if (t[r] < best) best = t[r];
      }
    }
    return best;
  }

  /** Node u's lowest floor, read now (a leaf read). */
  protected nodeFloor(sh: SharedState, u: number): number {
    this.leavesRead++;
    let f = Infinity;
    for (let x = u * this.pesPer, e = x + this.pesPer; x < e; x++) f = Math.min(f, peFloor(sh, x));
    return f;
  }

  /**
   * Tree node `i` of `t`, whose kept bound fell short of `need`: read again from below,
   * whether every one under it is at least `need` (then t[i] holds their lowest). Depth
   * first, left before right, as far as the first that falls short. The nodes on the way
   * down are on a stack of its own and the answer is a boolean: as a recursion returning
   * the value, each call took `need` and returned its answer as new heap numbers (times
   * are rarely small integers), on every message at large p (docs/benchmarks.md).
   */
  private refresh(sh: SharedState, t: Float64Array, i: number, need: number): boolean {
    const path = this.path;
    path[0] = i;
    for (let top = 1; top > 0; ) {
      const j = path[top - 1];
      if (j >= this.size) {
        const u = j - this.size;
        const f = this.nodeFloor(sh, u);
        this.storeLeaf(j, u, f);
        if (t[j] < need) return false;
        top--;
      } else if (t[2 * j] < need) path[top++] = 2 * j;
      else if (t[2 * j + 1] < need) path[top++] = 2 * j + 1;
      else {
        // Both children's kept bounds bound this node too, and have risen.
        const m = Math.min(t[2 * j], t[2 * j + 1]);
        if (m > t[j]) t[j] = m;
        top--;
      }
    }
    return true;
  }
}

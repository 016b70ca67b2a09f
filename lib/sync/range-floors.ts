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
import { KeptMinima } from './kept-minima.js';

/** A link keeps its levels as runs when they are at most this many; else it reads bands. */
export const MAX_RUNS = 32;

/** The lowest floor of each node of a class graph with PEs, as a segment tree of kept lower bounds. */
export class RangeFloors extends KeptMinima {
  private readonly t: Float64Array;

  constructor(n: number, pesPer: number) {
    super(n, pesPer);
    this.t = this.tree();
  }

  /** Nodes [a, b]: their lowest floor when every one is at least `need`, else -Infinity. */
  lowest(sh: SharedState, a: number, b: number, need: number): number {
    return this.lowestOf(sh, this.t, a, b, need);
  }

  protected storeLeaf(leaf: number, _u: number, f: number): void {
    // A floor that fell to -Infinity (its kernel ended) leaves the kept value.
    if (f > this.t[leaf]) this.t[leaf] = f;
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

// Runs on: any thread (a thread's Links and CostModel keep one each). Owns: a bounded
// memo of a value per ordered pair of PEs, direct-mapped: 4 * PEs slots (rounded up to a
// power of two, at least 1 024, at most 2^24), a newer pair taking an older one's slot. A ring's PEs talk to two peers each, so its
// pairs stay in; an all-to-all's p^2 pairs, each used for a few pieces, no longer fill a
// Map of p^2 entries (1 048 576 routes and as many costs a thread at p = 1024: issue 26
// item 5, nothing sized p^2; decision 0259).

export class PairCache<V> {
  /** A slot's pair (from * pes + to; -1: empty). */
  private readonly keys: Float64Array;
  private readonly vals: (V | undefined)[];
  /** 32 - log2(slots): Fibonacci hashing keeps a slot index's top bits. */
  private readonly shift: number;
  /** Slots: the most pairs it keeps. */
  readonly slots: number;

  constructor(private readonly pes: number) {
    let bits = 10;
    while (1 << bits < 4 * pes && bits < 24) bits++;
    this.shift = 32 - bits;
    this.slots = 1 << bits;
    this.keys = new Float64Array(1 << bits).fill(-1);
    this.vals = new Array<V | undefined>(1 << bits).fill(undefined);
  }

  /** The value kept for (from, to), or undefined. */
  get(from: number, to: number): V | undefined {
    const key = from * this.pes + to;
    const i = this.slot(from, to);
    return this.keys[i] === key ? this.vals[i] : undefined;
  }

  /** Keep `v` for (from, to), in place of the pair that had its slot. */
  set(from: number, to: number, v: V): void {
    const i = this.slot(from, to);
    this.keys[i] = from * this.pes + to;
    this.vals[i] = v;
  }

  private slot(from: number, to: number): number {
    return Math.imul(Math.imul(from, 0x85ebca6b) ^ to, 0x9e3779b1) >>> this.shift;
  }
}

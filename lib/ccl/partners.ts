// Runs on: executor threads (inside partner-based collective kernels). Owns:
// what the partner-based algorithms share — powers of two, a rank's partner
// in a binomial tree, and the fold that lets a power-of-two algorithm run on
// any number of ranks (docs/algorithms/partners.md, "Any number of ranks").
//
// Every partner is addressed by rank (tl.peer, docs/decisions/0060-peer-channels.md).
import type { KernelContext } from '../kernel/context.js';
import type { Tile } from '../tile/tile.js';
import type { Reduction } from './steps.js';

/** The largest power of two <= p (p >= 1). */
export function powerOfTwoBelow(p: number): number {
  let q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

/** The lowest set bit of v > 0 (v & -v). */
export function lowBit(v: number): number {
  return v & -v;
}

/** Number of rounds of a binomial tree or of Bruck over p ranks: ceil(log2 p). */
export function rounds(p: number): number {
  let k = 0;
  while (1 << k < p) k++;
  return k;
}

/**
 * The fold of p ranks onto q = powerOfTwoBelow(p) (MPICH's rule for a
 * non-power-of-two all-reduce): each extra rank r >= q hands its whole tile to
 * rank r - q, which reduces it into its own before the core runs among ranks
 * 0..q-1, and sends the result back after. With p a power of two there is
 * nothing to fold. Cost beyond the core: 2 (alpha + N beta) when p is not a
 * power of two.
 */
export class Fold {
  /** Ranks of the core: a power of two. */
  readonly q: number;
  /** This rank is one of the extras (r >= q): it only sends, then receives the result. */
  readonly extra: boolean;
  /** The extra rank that folds into this one, or -1. */
  readonly partner: number;

  constructor(
    readonly p: number,
    readonly r: number,
  ) {
    this.q = powerOfTwoBelow(p);
    this.extra = r >= this.q;
    this.partner = this.extra ? r - this.q : r + this.q < p ? r + this.q : -1;
  }

  /** Before the core: an extra sends its tile; its partner reduces it in. */
  async gather(tl: KernelContext, data: Tile, op: Reduction): Promise<void> {
    if (this.partner < 0) return;
    if (this.extra) {
      await tl.send(tl.peer(this.partner), data);
      return;
    }
    const got = await tl.recv(tl.peer(this.partner), data.size, data.dtype);
    tl.reduce(op, data, got, data);
  }

  /** After the core: the partner sends the result back into the extra's tile. */
  async spread(tl: KernelContext, data: Tile): Promise<void> {
    if (this.partner < 0) return;
    if (this.extra) await tl.recv(tl.peer(this.partner), data.size, data.dtype, data);
    else await tl.send(tl.peer(this.partner), data);
  }
}

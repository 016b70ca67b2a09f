// Runs on: executor threads (inside collective kernels). Owns: a segment of a
// tile cut into chunks, and the receive buffers a kernel reuses across its
// steps (./steps.ts, which runs the ring and line passes over them).
import type { KernelContext } from '../kernel/context.js';
import type { Tile } from '../tile/tile.js';

/**
 * Elements [base, base + len) of a tile cut into p chunks: chunk i is
 * [base + floor(i len / p), base + floor((i + 1) len / p)), so len need not
 * divide by p (lengths differ by at most one; some are empty when len < p).
 */
export class Chunks {
  /**
   * The last two chunk views handed out, of the last tile asked for: a ring
   * step receives into chunk i and the next step sends it, so two suffice.
   * Not one view per chunk: kept for a kernel's lifetime, those were p views
   * per rank, p^2 per thread under --threads 1 (1M Tiles, ~250 MiB of live
   * heap at p = 1024; docs/benchmarks.md, "Peak memory").
   */
  private viewsOf: Tile | undefined;
  private lastI = [-1, -1];
  private lastView: (Tile | undefined)[] = [undefined, undefined];
  private next = 0;

  constructor(
    readonly base: number,
    readonly len: number,
    readonly p: number,
  ) {}

  lo(i: number): number {
    return this.base + Math.floor((i * this.len) / this.p);
  }

  count(i: number): number {
    return this.lo(i + 1) - this.lo(i);
  }

  /** Chunk i of `data` as a view (shares storage; the same Tile when asked again soon after, for the same `data`). */
  of(data: Tile, i: number): Tile {
    if (data !== this.viewsOf) {
      this.viewsOf = data;
      this.lastI = [-1, -1];
      this.lastView = [undefined, undefined];
    }
    if (this.lastI[0] === i) return this.lastView[0] as Tile;
    if (this.lastI[1] === i) return this.lastView[1] as Tile;
    const view = data.slice(this.lo(i), this.count(i));
    this.lastI[this.next] = i;
    this.lastView[this.next] = view;
    this.next ^= 1;
    return view;
  }

  /** Chunk i cut again into q chunks (the next dimension of a 2-D algorithm). */
  split(i: number, q: number): Chunks {
    return new Chunks(this.lo(i), this.count(i), q);
  }
}

/**
 * Receive buffers reused across a kernel's steps: one tile per size. The chunk sizes of a
 * pass differ by at most one, so the first two sizes are kept in fields and a Map is made
 * only for a third: a Map a set, three sets a rank, was ~0.8 KB a rank of live heap
 * (its hash table) at p = 1024 for one or two tiles (decision 0226).
 */
export class ScratchTiles {
  private size0 = -1;
  private tile0: Tile | undefined;
  private size1 = -1;
  private tile1: Tile | undefined;
  private bySize: Map<number, Tile> | undefined;

  constructor(
    private readonly tl: KernelContext,
    readonly dtype: Tile['dtype'],
  ) {}

  of(n: number): Tile {
    if (n === this.size0) return this.tile0 as Tile;
    if (n === this.size1) return this.tile1 as Tile;
    return this.other(n);
  }

  private other(n: number): Tile {
    let t = this.bySize?.get(n);
    if (t !== undefined) return t;
    t = this.tl.zeros(n, this.dtype);
    if (this.size0 < 0) {
      this.size0 = n;
      this.tile0 = t;
    } else if (this.size1 < 0) {
      this.size1 = n;
      this.tile1 = t;
    } else (this.bySize ??= new Map()).set(n, t);
    return t;
  }
}

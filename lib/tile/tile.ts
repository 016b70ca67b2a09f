// Runs on: executor threads. Owns: Tile, a PE-local block of values (Triton's
// block tensor). Values are held as f32 already rounded to the tile's dtype, so
// arithmetic is exact f32 followed by one rounding into the dtype per op.
import type { DType } from '../dtype/index.js';
import { KernbenchError } from '../errors.js';
import type { SimdMemory } from './simd.js';
import { blankF32, blankGeneration, isBlank } from './blank.js';

export class Tile {
  /** The blank buffer's generation when this tile was made on it (a timing-only tile), else -1. */
  private readonly blankGen: number;

  constructor(
    readonly dtype: DType,
    readonly shape: readonly number[],
    readonly data: Float32Array,
    /** The slab whose memory `data` views (lib/tile/slab.ts), or null; lets the SIMD add work in place. */
    readonly slab: SimdMemory | null = null,
    /** Byte offset of `data` in `slab` (meaningful only with a slab). */
    readonly at = 0,
  ) {
    const n = shape.length === 1 ? shape[0] : shapeSize(shape); // hot path: most tiles are 1-D
    if (n !== data.length) throw new KernbenchError('ERR_VALUE_COUNT_MISMATCH', `tile shape [${shape.join(', ')}] holds ${n} elements, got ${data.length} values`);
    this.blankGen = slab === null && isBlank(data) ? blankGeneration() : -1;
  }

  /** @internal On the blank buffer as it is now (a timing-only tile): one comparison, not a look at the buffer. */
  get blank(): boolean {
    return this.blankGen === blankGeneration();
  }

  get size(): number {
    return this.data.length;
  }

  /** A 1-D view of elements [start, start + count) (shares storage). */
  slice(start: number, count: number): Tile {
    const s = this.slab;
    if (start < 0 || count < 0 || start + count > this.data.length) throw new KernbenchError('ERR_INDEX_OUT_OF_RANGE', `a tile slice must lie inside the tile's ${this.data.length} elements, got [${start}, ${start + count})`);
    if (s === null) {
      // A timing-only tile: its slices view the blank buffer too (no typed array per ring step).
      if (this.blank) return blankSlice(this.dtype, count);
      // As on a slab, not subarray (a loaded shard's tile, the ring's data, is not on a slab).
      const d = this.data;
      return new Tile(this.dtype, [count], new Float32Array(d.buffer, d.byteOffset + start * 4, count));
    }
    // A view straight on the slab: subarray looks up the species constructor (~90 vs ~50 ns).
    const at = this.at + start * 4;
    return new Tile(this.dtype, [count], new Float32Array(s.buffer, at, count), s, at);
  }
}

/**
 * A timing-only 1-D tile of `count` elements of `dtype`: one per dtype and length
 * on this thread, since a tile on the blank buffer has no values of its own and
 * any two of one shape are interchangeable (its shape is frozen). A ring step
 * cuts a chunk view per step; made anew, the views a rank held while its thread
 * waited for the other thread were half of what --threads 2 promoted to the old
 * generation at p = 1024 (decision 0035).
 */
function blankSlice(dtype: DType, count: number): Tile {
  let byCount = blankSlices.get(dtype);
  if (byCount === undefined) blankSlices.set(dtype, (byCount = new Map()));
  const t = byCount.get(count);
  // The blank buffer may have grown since (its old views are no longer blank).
  if (t !== undefined && t.blank) return t;
  if (byCount.size >= MAX_BLANK_SLICES) byCount.clear();
  const made = new Tile(dtype, Object.freeze([count]), blankF32(count));
  byCount.set(count, made);
  return made;
}
const blankSlices = new Map<DType, Map<number, Tile>>();
/** Lengths kept per dtype; past it the cache starts over (a kernel cuts few lengths). */
const MAX_BLANK_SLICES = 64;

/** Normalise a `count | shape` argument to a shape. */
export function toShape(s: number | readonly number[]): number[] {
  return typeof s === 'number' ? [s] : [...s];
}

export function shapeSize(s: readonly number[]): number {
  let n = 1;
  for (let i = 0; i < s.length; i++) n *= s[i];
  return n;
}

// Runs on: executor threads. Owns: what a kernel's values are made of, in the
// plan's data mode, chosen once per `tl` (valuesFor):
//   DataValues        tiles hold values: loads decode, stores encode, math computes,
//                     results are tile memory of the kernel run (lib/tile/slab.ts)
//   TimingOnlyValues  --no-data: tiles have a shape and no storage of their own
//                     (blank tiles), nothing is copied or computed
// Costs are not charged here: `tl` charges the same cost in both modes
// (lib/kernel/context.ts), so virtual times do not depend on the mode.
import { bytesPerElement, decode, encode, roundArray, type DType } from '../dtype/index.js';
import { allocF32, allocTile, blankTile, type KernelRun } from '../tile/slab.js';
import { Tile } from '../tile/tile.js';
import { addFrom, addTiles, dot, elementwise, softmax, type Operand } from './math.js';

/** `tl`'s check that an `out` tile holds exactly `count` elements of `dtype` (it throws the kernel's error). */
export type CheckOut = (op: string, out: Tile, dtype: DType, count: number) => void;

export interface Values {
  /** A fresh tile: zeroed, or in timing-only mode one whose values are unspecified. */
  newTile(dtype: DType, shape: readonly number[], n: number): Tile;
  /** The tile a load gives: `count` elements of `dtype` at byte `at` of the arena, in `shape`; the arena's own bytes when `inPlace` and they can be. */
  load(arena: Uint8Array, at: number, dtype: DType, shape: readonly number[], count: number, inPlace: boolean): Tile;
  /** Write `tile` at byte `at` of the arena as `dtype`. */
  store(arena: Uint8Array, at: number, dtype: DType, tile: Tile): void;
  /** a + b into `out` or a new tile, where the mode has a fast way (two tiles of one size); null otherwise. */
  add(a: Operand, b: Operand, out: Tile | undefined): Tile | null;
  /**
   * into = elements [at, at + into.size) of `a` + into (checked by the caller). With
   * `staging`, a tile of into's size and dtype on into's slab, those elements are copied
   * there first and the slab's SIMD add does the sum (same bits).
   */
  addAt(a: Tile, at: number, into: Tile, staging?: Tile): void;
  /** An elementwise op's result tile. */
  elementwise(op: string, xs: Operand[], f: (...v: number[]) => number): Tile;
  /** Copy `r`'s values into `out` (same size). */
  copy(r: Tile, out: Tile): void;
  softmax(x: Tile): Tile;
  dot(a: Tile, b: Tile): Tile;
  /** `x` converted to `dtype` (rounded once). */
  convert(x: Tile, dtype: DType): Tile;
}

class DataValues implements Values {
  constructor(
    /** The kernel run whose tile memory the results are. */
    private readonly run: KernelRun | undefined,
    private readonly checkOut: CheckOut,
  ) {}

  newTile(dtype: DType, shape: readonly number[], n: number): Tile {
    return allocTile(dtype, shape, n, this.run);
  }

  load(arena: Uint8Array, at: number, dtype: DType, shape: readonly number[], count: number, inPlace: boolean): Tile {
    // Tiles hold f32 values, so only an f32 shard's bytes can be the tile (arena offsets are 64-byte aligned).
    if (inPlace && dtype === 'f32') return new Tile('f32', shape, new Float32Array(arena.buffer, at, count));
    const tile = this.newTile(dtype, shape, count);
    decode(dtype, arena.subarray(at, at + count * bytesPerElement(dtype)), tile.data);
    return tile;
  }

  store(arena: Uint8Array, at: number, dtype: DType, tile: Tile): void {
    // A tile loaded in place and stored back where it came from is already there.
    const home = tile.data.buffer === arena.buffer && tile.data.byteOffset === at && dtype === 'f32';
    if (!home) encode(dtype, tile.data, arena.subarray(at, at + tile.size * bytesPerElement(dtype)));
  }

  add(a: Operand, b: Operand, out: Tile | undefined): Tile | null {
    if (!(a instanceof Tile && b instanceof Tile && a.size === b.size)) return null;
    // The collectives' hot path: one monomorphic loop, no closure per element.
    if (out) this.checkOut('add', out, a.dtype, a.size);
    const o = out ?? allocTile(a.dtype, a.shape, a.size, this.run);
    addTiles(a, b, o);
    roundArray(a.dtype, o.data);
    return o;
  }

  addAt(a: Tile, at: number, into: Tile, staging?: Tile): void {
    const n = into.size;
    if (staging !== undefined && staging.slab !== null && staging.slab === into.slab && staging.size === n && n >= 4) {
      // A copy and the SIMD add cost far less than the scalar loop (counted: decision 0216).
      const d = a.data;
      staging.data.set(new Float32Array(d.buffer, d.byteOffset + at * 4, n));
      addTiles(staging, into, into);
    } else addFrom(a.data, at, into.data);
    roundArray(a.dtype, into.data);
  }

  elementwise(op: string, xs: Operand[], f: (...v: number[]) => number): Tile {
    return elementwise(op, xs, f, this.run);
  }

  copy(r: Tile, out: Tile): void {
    out.data.set(r.data);
  }

  softmax(x: Tile): Tile {
    return softmax(x, this.run);
  }

  dot(a: Tile, b: Tile): Tile {
    return dot(a, b, this.run);
  }

  convert(x: Tile, dtype: DType): Tile {
    const out = allocF32(x.size, this.run);
    out.set(x.data);
    roundArray(dtype, out);
    return new Tile(dtype, x.shape, out);
  }
}

/** Timing-only mode (--no-data): every tile is blank (lib/tile/slab.ts, blankTile). */
class TimingOnlyValues implements Values {
  constructor(
    private readonly run: KernelRun | undefined,
    private readonly checkOut: CheckOut,
  ) {}

  newTile(dtype: DType, shape: readonly number[], n: number): Tile {
    return blankTile(dtype, shape, n);
  }

  load(_arena: Uint8Array, _at: number, dtype: DType, shape: readonly number[], count: number): Tile {
    return blankTile(dtype, shape, count);
  }

  store(): void {
    // timing-only mode: no bytes move
  }

  add(a: Operand, _b: Operand, out: Tile | undefined): Tile | null {
    // Into `out` (a ring step's reduction): nothing to compute or allocate.
    if (!(out && a instanceof Tile)) return null;
    this.checkOut('add', out, a.dtype, a.size);
    return out;
  }

  addAt(): void {
    // Nothing to compute.
  }

  elementwise(op: string, xs: Operand[], f: (...v: number[]) => number): Tile {
    const lead = xs.find((x): x is Tile => x instanceof Tile);
    if (lead) return blankTile(lead.dtype, lead.shape, lead.size);
    // Scalars only: the data path's error.
    return elementwise(op, xs, f, this.run);
  }

  copy(): void {
    // No values to copy (both may view the same blank buffer).
  }

  softmax(x: Tile): Tile {
    return blankTile(x.dtype, x.shape, x.size);
  }

  dot(a: Tile, b: Tile): Tile {
    return blankTile('f32', [a.shape[0], b.shape[1]], a.shape[0] * b.shape[1]);
  }

  convert(x: Tile, dtype: DType): Tile {
    return blankTile(dtype, x.shape, x.size);
  }
}

/** The values of a kernel run in the plan's data mode. */
export function valuesFor(noData: boolean, run: KernelRun | undefined, checkOut: CheckOut): Values {
  return noData ? new TimingOnlyValues(run, checkOut) : new DataValues(run, checkOut);
}

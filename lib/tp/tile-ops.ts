// Runs on: executor threads (inside the transformer layer's kernels). Owns:
// the few tile helpers the layer's kernels need beyond `tl`'s arithmetic,
// written against the public Tile so that a user can copy them:
//
//   reshape, trans, broadcastCol, rowsOf, putRows   layout: where values sit,
//        not what they are. Free, as Triton's tl.reshape / tl.trans / a
//        broadcast are (no cycles charged).
//   unary(tl, x, f)   an elementwise function tl has no op for (exp, rsqrt,
//        tanh): charged as one vector pass through tl.mul(x, 1), then f applied
//        to the values and rounded once to x's dtype. Triton has tl.exp,
//        tl.sqrt, tl.rsqrt; `tl` does not yet (docs/tensor-parallel.md).
//
// In timing-only runs (--no-data) a tile is blank (Tile.blank): it has a
// shape and no values, so each helper returns a blank tile of the right shape
// without touching values; times do not depend on values.
import { roundArray } from '../dtype/index.js';
import type { KernelContext } from '../kernel/context.js';
import { Tile } from '../tile/tile.js';

/** The same values under another shape of the same size (row-major). */
export function reshape(x: Tile, shape: readonly number[]): Tile {
  return new Tile(x.dtype, shape, x.data);
}

/** [r, c] -> [c, r]. */
export function trans(tl: KernelContext, x: Tile): Tile {
  const [r, c] = x.shape;
  const out = tl.zeros([c, r], x.dtype);
  if (x.blank) return out;
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out.data[j * r + i] = x.data[i * c + j];
  return out;
}

/** A [rows, n] tile whose every column is `col` ([rows] or [rows, 1]): `col[:, None]`. */
export function broadcastCol(tl: KernelContext, col: Tile, n: number): Tile {
  const rows = col.size;
  const out = tl.zeros([rows, n], col.dtype);
  if (col.blank) return out;
  for (let r = 0; r < rows; r++) out.data.fill(col.data[r], r * n, (r + 1) * n);
  return out;
}

/** A [rows, n] tile whose every row is `row` ([n]): `row[None, :]`. */
export function broadcastRow(tl: KernelContext, row: Tile, rows: number): Tile {
  const out = tl.zeros([rows, row.size], row.dtype);
  if (row.blank) return out;
  for (let r = 0; r < rows; r++) out.data.set(row.data, r * row.size);
  return out;
}

/** Rows start, start + step, start + 2 step, ... (count of them) of a 2-D tile: one sequence of an [s, b, .] block. */
export function rowsOf(tl: KernelContext, x: Tile, start: number, step: number, count: number): Tile {
  const cols = x.shape[1];
  const out = tl.zeros([count, cols], x.dtype);
  if (x.blank) return out;
  for (let i = 0; i < count; i++) out.data.set(x.data.subarray((start + i * step) * cols, (start + i * step + 1) * cols), i * cols);
  return out;
}

/** The inverse of rowsOf: write `part`'s rows into `into` at rows start, start + step, ... */
export function putRows(into: Tile, part: Tile, start: number, step: number): void {
  if (into.blank || part.blank) return;
  const cols = into.shape[1];
  for (let i = 0; i < part.shape[0]; i++) into.data.set(part.data.subarray(i * cols, (i + 1) * cols), (start + i * step) * cols);
}

/** f applied to every element, charged as one vector pass, rounded once to x's dtype. */
export function unary(tl: KernelContext, x: Tile, f: (v: number) => number): Tile {
  const out = tl.mul(x, 1); // a fresh tile of x's values, and the vector pass's cost
  if (out.blank) return out;
  for (let i = 0; i < out.size; i++) out.data[i] = f(out.data[i]);
  roundArray(out.dtype, out.data);
  return out;
}

/** Columns [c0, c0 + n) of a 2-D tile: one head's block of a [rows, heads * d] activation. */
export function colsOf(tl: KernelContext, x: Tile, c0: number, n: number): Tile {
  const [rows, cols] = x.shape;
  const out = tl.zeros([rows, n], x.dtype);
  if (x.blank) return out;
  for (let r = 0; r < rows; r++) out.data.set(x.data.subarray(r * cols + c0, r * cols + c0 + n), r * n);
  return out;
}

/** The inverse of colsOf: write `part` ([rows, n]) into `into`'s columns [c0, c0 + n). */
export function putCols(into: Tile, part: Tile, c0: number): void {
  if (into.blank || part.blank) return;
  const cols = into.shape[1];
  const n = part.shape[1];
  for (let r = 0; r < part.shape[0]; r++) into.data.set(part.data.subarray(r * n, (r + 1) * n), r * cols + c0);
}

/** A tile of `shape` holding `v` everywhere (a constant, as tl.full). */
export function full(tl: KernelContext, shape: readonly number[], dtype: Tile['dtype'], v: number): Tile {
  const out = tl.zeros(shape, dtype);
  if (!out.blank) out.data.fill(v);
  return out;
}

/** The causal mask of one sequence: 0 where key j <= query i, -Infinity above the diagonal. */
export function causalMask(tl: KernelContext, s: number): Tile {
  const out = tl.zeros([s, s], 'f32');
  if (out.blank) return out;
  for (let i = 0; i < s; i++) out.data.fill(-Infinity, i * s + i + 1, (i + 1) * s);
  return out;
}

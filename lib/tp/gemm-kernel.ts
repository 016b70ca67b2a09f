// Runs on: executor threads (kernels are imported there by module URL and
// export name). Owns: the kernels of the tensor-parallel layers —
//   gemm      y = x @ w (+ bias) on each PE's shards (ColumnParallelLinear,
//             RowParallelLinear's partial product, the gemm benches);
//   addBias   y += bias in place (RowParallelLinear's epilogue, launched once
//             after the all-reduce so the bias is not summed ws times).
// The host side (which tensors, which PEs) lives in layers.ts.
//
// Shard shapes. A gemm launch runs on the PEs of x's shards. On each such PE:
//
//        x shard            w shard             y shard
//     [m rows, K]    @   [K, n cols]     =   [m rows, n cols]
//     (all K columns)    (all K rows)        rows of x's block, columns of w's
//
// so x may be replicated or split by rows, and w replicated or split by
// columns, as long as y is split the same way (y block = x's rows x w's
// columns). One PE holding everything is the simplest case; x replicated with
// w and y column_wise over the PEs of a cube splits the output columns.
import type { KernelContext } from '../kernel/context.js';
import { defineKernel } from '../kernel/define.js';
import type { Tile } from '../tile/tile.js';
import type { ShardDesc, TensorDesc } from '../shm/tensor-desc.js';

/**
 * y = x @ w (+ bias). The product is accumulated in f32 by tl.dot, the bias is
 * added in f32 (a fused epilogue), and the sum is rounded once to y's dtype.
 * `bias` is 1-D [N] split like w's columns; JSON carries an absent bias as null.
 */
export const gemm = defineKernel(import.meta.url, 'gemm', async (tl, x: TensorDesc, w: TensorDesc, y: TensorDesc, bias?: TensorDesc | null) => {
  checkGemmBlocks(tl, x, w, y, bias ?? undefined);
  const a = await tl.load(x); // [m, K]
  const b = await tl.load(w); // [K, n]
  let acc = tl.dot(a, b); // [m, n], f32
  if (bias) acc = tl.add(acc, broadcastRows(tl, await tl.load(bias), acc.shape[0]));
  await tl.store(y, tl.to(acc, y.dtype));
});

/** y += bias (bias [N] broadcast over y's rows), rounded once to y's dtype. */
export const addBias = defineKernel(import.meta.url, 'addBias', async (tl, y: TensorDesc, bias: TensorDesc) => {
  const ys = tl.shard(y);
  const bs = tl.shard(bias);
  if (bs.cols[0] !== ys.cols[0] || bs.cols[1] !== ys.cols[1]) {
    throw tl.error('ERR_SHARD_LAYOUT', `bias '${bias.name}' must cover y's columns [${span(ys.cols)}] on this PE, got columns [${span(bs.cols)}]`);
  }
  const v = await tl.load(y);
  await tl.store(y, tl.add(v, broadcastRows(tl, await tl.load(bias), ys.rows[1])));
});

/**
 * A [rows, n] tile whose every row is `row` (Triton's `bias[None, :]`). The
 * broadcast itself is free, as in Triton; the add that consumes it is charged.
 */
function broadcastRows(tl: KernelContext, row: Tile, rows: number): Tile {
  const out = tl.zeros([rows, row.size], row.dtype);
  for (let r = 0; r < rows; r++) out.data.set(row.data, r * row.size);
  return out;
}

/** Refuse shard layouts whose blocks do not line up (see the diagram at the top). */
function checkGemmBlocks(tl: KernelContext, x: TensorDesc, w: TensorDesc, y: TensorDesc, bias: TensorDesc | undefined): void {
  if (x.shape.length !== 2 || w.shape.length !== 2 || y.shape.length !== 2) {
    throw tl.error('ERR_INVALID_SHAPE', `gemm takes 2-D x, w and y, got shapes [${x.shape.join(', ')}], [${w.shape.join(', ')}] and [${y.shape.join(', ')}]`);
  }
  const [, k] = x.shape;
  if (w.shape[0] !== k) throw tl.error('ERR_SHAPE_MISMATCH', `gemm: x is [${x.shape.join(', ')}] so w needs ${k} rows, got w of shape [${w.shape.join(', ')}]`);
  const xs = tl.shard(x);
  const ws = tl.shard(w);
  const ys = tl.shard(y);
  if (xs.cols[1] !== k) throw tl.error('ERR_SHARD_LAYOUT', `gemm: this PE's shard of x must hold all ${k} columns (x may be split by rows only), got columns [${span(xs.cols)}]`);
  if (ws.rows[1] !== k) throw tl.error('ERR_SHARD_LAYOUT', `gemm: this PE's shard of w must hold all ${k} rows (w may be split by columns only), got rows [${span(ws.rows)}]`);
  if (!sameBlock(ys, xs.rows, ws.cols)) {
    throw tl.error('ERR_SHARD_LAYOUT', `gemm: this PE's shard of y must be rows [${span(xs.rows)}] x columns [${span(ws.cols)}] (x's rows, w's columns), got rows [${span(ys.rows)}] x columns [${span(ys.cols)}]`);
  }
  if (bias) {
    const bs = tl.shard(bias);
    if (bs.cols[0] !== ws.cols[0] || bs.cols[1] !== ws.cols[1]) {
      throw tl.error('ERR_SHARD_LAYOUT', `gemm: this PE's shard of bias must cover w's columns [${span(ws.cols)}], got columns [${span(bs.cols)}]`);
    }
  }
}

function sameBlock(s: ShardDesc, rows: [number, number], cols: [number, number]): boolean {
  return s.rows[0] === rows[0] && s.rows[1] === rows[1] && s.cols[0] === cols[0] && s.cols[1] === cols[1];
}

/** [start, count] as a half-open range `start..end`. */
function span([start, count]: [number, number]): string {
  return `${start}..${start + count}`;
}

// Runs on: executor threads (imported there by module URL and export name).
// Owns: the kernels of the transformer layer beyond the GEMM (gemm-kernel.ts):
//
//   norm           LayerNorm or RMSNorm over each row of x [rows, h]
//   coreAttention  softmax(q k^T / sqrt(d) + causal mask) v for each local
//                  query head of a [rows, (nq + 2 nkv) d] QKV block, with
//                  grouped-query attention (query head i reads key/value
//                  group i / (nq / nkv)); rows are [s, b] (Megatron's layout:
//                  row = position * b + sequence)
//   gelu           in place, Megatron's tanh approximation
//   swiglu         out = silu(gate) * up
//   residualAdd    out = a + b
//
// Written with `tl` and the tile helpers of tile-ops.ts only, so a user can
// copy any of them. Each computes in f32 and rounds once, at its store, to the
// output's dtype; the JS reference (layer-reference.ts) rounds at the same
// places.
import type { KernelContext } from '../kernel/context.js';
import { defineKernel } from '../kernel/define.js';
import type { TensorDesc } from '../shm/tensor-desc.js';
import type { Tile } from '../tile/tile.js';
import { broadcastCol, broadcastRow, causalMask, colsOf, full, putCols, putRows, rowsOf, trans, unary } from './tile-ops.js';

/** Shape of one rank's attention: local heads, head size, sequences and their length. */
export interface AttentionDims {
  /** Query heads on this rank. */
  heads: number;
  /** Key/value groups on this rank. */
  groups: number;
  /** Head size d. */
  headDim: number;
  /** s: positions per sequence. */
  seqLength: number;
  /** b: sequences (the micro-batch). */
  batch: number;
}

export type NormKind = 'LayerNorm' | 'RMSNorm';

/** Megatron's default epsilon (layernorm_epsilon 1e-5). */
export const NORM_EPS = 1e-5;

/**
 * y = norm(x) * gamma (+ beta). Row means come from the matrix unit (x @ 1/h),
 * as a reduction along a row is a dot with a constant column.
 */
export const norm = defineKernel(import.meta.url, 'norm', async (tl, x: TensorDesc, gamma: TensorDesc, beta: TensorDesc | null, y: TensorDesc, kind: NormKind) => {
  const xf = tl.to(await tl.load(x), 'f32');
  const [rows, h] = xf.shape;
  const meanOf = full(tl, [h, 1], 'f32', 1 / h);
  let centred = xf;
  if (kind === 'LayerNorm') centred = tl.sub(xf, broadcastCol(tl, tl.dot(xf, meanOf), h));
  const meanSquare = tl.dot(tl.mul(centred, centred), meanOf); // [rows, 1]: variance, or RMSNorm's mean square
  const rstd = unary(tl, tl.add(meanSquare, NORM_EPS), (v) => 1 / Math.sqrt(v));
  let out = tl.mul(tl.mul(centred, broadcastCol(tl, rstd, h)), broadcastRow(tl, await tl.load(gamma), rows));
  if (beta) out = tl.add(out, broadcastRow(tl, await tl.load(beta), rows));
  await tl.store(y, tl.to(out, y.dtype));
});

/**
 * ctx [rows, heads d] from qkv [rows, (heads + 2 groups) d]: columns are this
 * rank's query heads, then its key heads, then its value heads, d each.
 */
export const coreAttention = defineKernel(import.meta.url, 'coreAttention', async (tl, qkv: TensorDesc, ctx: TensorDesc, dims: AttentionDims) => {
  const { heads, groups, headDim: d, seqLength: s, batch: b } = dims;
  const all = await tl.load(qkv);
  const out = tl.zeros([s * b, heads * d], ctx.dtype);
  const mask = causalMask(tl, s);
  const scale = 1 / Math.sqrt(d);
  const perGroup = heads / groups;
  for (let g = 0; g < groups; g++) {
    const k = colsOf(tl, all, (heads + g) * d, d);
    const v = colsOf(tl, all, (heads + groups + g) * d, d);
    for (let seq = 0; seq < b; seq++) {
      const kT = trans(tl, rowsOf(tl, k, seq, b, s)); // [d, s]
      const vs = rowsOf(tl, v, seq, b, s); // [s, d]
      for (let i = g * perGroup; i < (g + 1) * perGroup; i++) {
        const q = rowsOf(tl, colsOf(tl, all, i * d, d), seq, b, s);
        const scores = tl.add(tl.mul(tl.dot(q, kT), scale), mask); // [s, s], f32
        const probs = tl.to(tl.softmax(scores), qkv.dtype);
        const head = tl.to(tl.dot(probs, vs), ctx.dtype); // [s, d]
        putHead(tl, out, head, i * d, seq, b);
      }
    }
  }
  await tl.store(ctx, out);
});

/** One head's [s, d] result into columns [c0, c0 + d) of sequence `seq`'s rows of out [s b, heads d]. */
function putHead(tl: KernelContext, out: Tile, head: Tile, c0: number, seq: number, b: number): void {
  const rows = rowsOf(tl, out, seq, b, head.shape[0]);
  putCols(rows, head, c0);
  putRows(out, rows, seq, b);
}

/** t = gelu(t) in place: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), Megatron's bias_gelu form. */
export const gelu = defineKernel(import.meta.url, 'gelu', async (tl, t: TensorDesc) => {
  const x = tl.to(await tl.load(t), 'f32');
  const inner = tl.mul(x, tl.fma(tl.mul(x, x), 0.044715 * Math.sqrt(2 / Math.PI), Math.sqrt(2 / Math.PI)));
  const y = tl.mul(tl.mul(x, 0.5), tl.add(unary(tl, inner, Math.tanh), 1));
  await tl.store(t, tl.to(y, t.dtype));
});

/**
 * out = silu(gate) * up = gate / (1 + exp(-gate)) * up (Llama's SwiGLU), from
 * fc1 [rows, 2n]: columns [0, n) are the gate, [n, 2n) the up projection
 * (Megatron's fused linear_fc1 on one rank); out is [rows, n].
 */
export const swiglu = defineKernel(import.meta.url, 'swiglu', async (tl, fc1: TensorDesc, out: TensorDesc) => {
  const both = await tl.load(fc1);
  const n = both.shape[1] / 2;
  const g = tl.to(colsOf(tl, both, 0, n), 'f32');
  const silu = tl.div(g, tl.add(unary(tl, g, (v) => Math.exp(-v)), 1));
  await tl.store(out, tl.to(tl.mul(silu, colsOf(tl, both, n, n)), out.dtype));
});

/** out = a + b (the residual connections), rounded once to out's dtype. */
export const residualAdd = defineKernel(import.meta.url, 'residualAdd', async (tl, a: TensorDesc, b: TensorDesc, out: TensorDesc) => {
  const sum = tl.add(tl.to(await tl.load(a), 'f32'), await tl.load(b));
  await tl.store(out, tl.to(sum, out.dtype));
});

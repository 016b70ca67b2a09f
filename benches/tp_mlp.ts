// Runs on: main (run) and executor threads (worker, one call per rank).
// A Megatron tensor-parallel MLP written as a PyTorch script: spawn one rank
// per SIP -> initProcessGroup -> initializeModelParallel(TP = world size) ->
//
//   x [M, H] --ColumnParallelLinear(H -> 4H)--> h_r [M, 4H/ws] --ReLU-->
//            --RowParallelLinear(4H -> H)--> allReduce --> + b2 --> y [M, H]
//
// The activation is a ReLU kernel (below), applied in place to each rank's
// slice: it is elementwise, so it commutes with the column split and the pair
// of layers needs a single all-reduce (Megatron's design).
//
// Weights, biases and x come from a seeded generator on the full, unsplit
// tensors (PyTorch nn.Linear's init range, U(-1/sqrt(fan_in), 1/sqrt(fan_in)));
// each rank keeps its slice through loadFullWeight/loadFullBias. Every rank's
// y is checked element by element against a single-device reference in plain
// JS with dtype rounding between the layers, and the ranks must agree bit for
// bit (they all hold the all-reduce's one result).
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import type { Torch } from '../lib/host/torch.js';
import { defineKernel } from '../lib/kernel/define.js';
import type { TensorDesc } from '../lib/shm/tensor-desc.js';
import { ColumnParallelLinear, RowParallelLinear, parallelState } from '../lib/tp/index.js';
import { matmul, rounded, seededValues, unitRoundoff, type FloatDType } from '../lib/tp/reference.js';
import { GEMM_DTYPES } from './gemm_single_pe.js';

const options = (z: Zod) => z.object({
  dtype: z.enum(GEMM_DTYPES).default('f16').describe('element type of weights, activations and output'),
});

export default defineBench({
  description: 'tensor-parallel MLP (ColumnParallelLinear H->4H, ReLU, RowParallelLinear 4H->H, one all-reduce) on every SIP, checked against a single-device JS reference',
  options,
  run,
});

export interface MlpDims {
  /** Tokens (rows of x). */
  m: number;
  /** Hidden size; the MLP's inner size is 4H. */
  h: number;
}

// 4H = 384 splits evenly over 1, 2, 3, 4, 6 and 8 ranks (the shipped topologies have 2, 6 or 8 SIPs).
export const MLP_DIMS: MlpDims = { m: 32, h: 96 };
const SEED = 27;

export interface MlpParameters {
  x: Float32Array; // [m, h]
  w1: Float32Array; // [h, 4h]
  b1: Float32Array; // [4h]
  w2: Float32Array; // [4h, h]
  b2: Float32Array; // [h]
}

/** The full, unsplit parameters and input, rounded to dtype. The same on every rank. */
export function mlpParameters(d: MlpDims, dtype: FloatDType): MlpParameters {
  const f = 4 * d.h;
  const b1 = 1 / Math.sqrt(d.h);
  const b2 = 1 / Math.sqrt(f);
  return {
    x: seededValues(SEED, d.m * d.h, dtype),
    w1: seededValues(SEED + 1, d.h * f, dtype, -b1, b1),
    b1: seededValues(SEED + 2, f, dtype, -b1, b1),
    w2: seededValues(SEED + 3, f * d.h, dtype, -b2, b2),
    b2: seededValues(SEED + 4, d.h, dtype, -b2, b2),
  };
}

/**
 * Single-device reference: h = dtype(relu(x @ W1 + b1)), y = dtype(h @ W2 + b2),
 * products summed in f64, rounded to dtype after each layer.
 *
 * Tolerance per element of y, with u the unit roundoff of dtype (2^-11 for
 * f16) and A = sum_j |h_j W2_ji| + |b2_i| (the scale of the second sum):
 *   - h may differ from the reference's by 1 ulp <= 2u|h| (the kernel rounds
 *     f64 -> f32 -> dtype, the reference f64 -> dtype): <= 2uA in y;
 *   - each rank's partial product is rounded to dtype: <= uA in total;
 *   - the all-reduce adds ws partials in dtype, ws - 1 roundings: <= (ws-1)uA;
 *   - the bias add and the reference's own rounding: <= 2uA.
 * So |y_tp - y_ref| <= (ws + 4) u A (first order; f32 rounding inside the
 * kernels is 2^13 times smaller than u for f16 and ignored).
 */
export function mlpReference(p: MlpParameters, d: MlpDims, dtype: FloatDType, ws: number): { y: Float32Array; tolerance: Float64Array } {
  const f = 4 * d.h;
  const h = rounded(dtype, matmul(p.x, p.w1, d.m, d.h, f, p.b1).value.map((v) => Math.max(v, 0)));
  const second = matmul(h, p.w2, d.m, f, d.h, p.b2);
  const u = unitRoundoff(dtype);
  return { y: rounded(dtype, second.value), tolerance: second.absSum.map((a) => (ws + 4) * u * a) };
}

/** In-place ReLU on each PE's shard: t = max(t, 0). */
export const relu = defineKernel(import.meta.url, 'relu', async (tl, t: TensorDesc) => {
  await tl.store(t, tl.maximum(await tl.load(t), 0));
});

interface RankResult {
  rank: number;
  /** Virtual time of the forward pass on this rank: first launch to y ready, in ns. */
  forwardNs: number;
  y: Float32Array;
}

export async function worker(rank: number, d: MlpDims, dtype: FloatDType, torch: Torch): Promise<RankResult> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  parallelState.initializeModelParallel(torch, { tensorModelParallelSize: torch.distributed.getWorldSize() });
  const p = mlpParameters(d, dtype);
  const fc1 = new ColumnParallelLinear(torch, { inFeatures: d.h, outFeatures: 4 * d.h, bias: true, dtype });
  const fc2 = new RowParallelLinear(torch, { inFeatures: 4 * d.h, outFeatures: d.h, bias: true, dtype });
  await fc1.loadFullWeight(p.w1);
  await fc1.loadFullBias(p.b1);
  await fc2.loadFullWeight(p.w2);
  await fc2.loadFullBias(p.b2);
  const x = torch.zeros([d.m, d.h], { dtype, name: 'x' });
  await x.copy_(torch.fromArray(p.x, { shape: [d.m, d.h], dtype }));

  const t0 = torch.host.clockPs;
  const h = await fc1.forward(x);
  await torch.launch('relu', relu, h);
  const y = await fc2.forward(h);
  const out = await y.numpy();
  const forwardNs = (torch.host.clockPs - t0) / 1000;
  parallelState.destroyModelParallel(torch);
  return { rank, forwardNs, y: out.data };
}

async function run(torch: Torch, ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const dtype = ctx.options.dtype;
  const ws = torch.spec.system.sips.count;
  const d = MLP_DIMS;
  const ranks = await torch.multiprocessing.spawn(worker, { args: [d, dtype], nprocs: ws });
  const noData = ctx.config.noData ?? false;
  const ref = mlpReference(mlpParameters(d, dtype), d, dtype, ws);
  const lines: string[] = [];
  let ok = true;
  if (noData) lines.push(`  timing only (--no-data), results not checked; forward ${Math.max(...ranks.map((r) => r.forwardNs)).toFixed(3)} ns`);
  for (const r of noData ? [] : ranks) {
    const c = compare(r.y, ref.y, ref.tolerance);
    const same = sameBits(r.y, ranks[0].y);
    ok &&= c.wrong === 0 && same;
    lines.push(
      `  rank ${r.rank}: ${c.wrong === 0 ? 'OK' : `FAIL: ${c.wrong} of ${r.y.length} beyond tolerance`}; max |err| ${c.maxAbs.toExponential(2)} (max |y| ${c.maxRef.toFixed(3)}), ${(100 * c.maxOfTol).toFixed(1)}% of tolerance; ${same ? 'identical to rank 0' : 'DIFFERS from rank 0'}; forward ${r.forwardNs.toFixed(3)} ns`,
    );
  }
  lines.unshift(`  MLP M=${d.m} H=${d.h} (4H=${4 * d.h}) ${dtype}, TP=${ws}: tolerance (ws + 4) u sum|h W2| per element, u = ${unitRoundoff(dtype)}`);
  return [
    {
      bench: ctx.bench,
      algorithm: 'tp_mlp',
      topology: torch.topologyName,
      worldSize: ws,
      nElem: d.m * d.h,
      dtype,
      ok,
      critNs: Math.max(...ranks.map((r) => r.forwardNs)),
      lines,
      outputs: ranks.map((r) => r.y),
    },
  ];
}

/** Elements beyond tolerance, the largest error (absolute and as a fraction of its tolerance) and the largest |ref|. */
export function compare(got: Float32Array, ref: Float32Array, tolerance: Float64Array): { wrong: number; maxAbs: number; maxOfTol: number; maxRef: number } {
  let wrong = 0, maxAbs = 0, maxOfTol = 0, maxRef = 0;
  for (let i = 0; i < ref.length; i++) {
    const e = Math.abs(got[i] - ref[i]);
    if (!(e <= tolerance[i])) wrong++;
    maxAbs = Math.max(maxAbs, e);
    maxRef = Math.max(maxRef, Math.abs(ref[i]));
    maxOfTol = Math.max(maxOfTol, tolerance[i] > 0 ? e / tolerance[i] : e > 0 ? Infinity : 0);
  }
  return { wrong, maxAbs, maxOfTol, maxRef };
}

function sameBits(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  return x.every((v, i) => v === y[i]);
}

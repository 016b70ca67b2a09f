// Runs on: main (run; the kernel runs on the executor of SIP 0, cube 0, PE 0).
// One GEMM y = x @ w (M = N = K = 64 by default, --dtype, f16 unless given) on
// one PE, checked element by element against a plain JS matmul, reported as
// crit_ns and achieved vs peak FLOP/s. gemm_sweep runs measureGemm over a grid.
//
// Peak per PE = timing.pe.gemm_macs_per_cycle x 2 FLOP/MAC x clock_ghz GHz
// (f16/bf16); f32 runs the matrix unit at half rate (lib/topology/cost-model.ts),
// so its peak is half. Achieved = 2 M N K / crit_ns; crit_ns includes loading
// x and w from HBM and storing y, so small GEMMs sit well below peak.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { DPPolicy } from '../lib/host/dp-policy.js';
import type { Torch } from '../lib/host/torch.js';
import type { Topology } from '../lib/config/topology-schema.js';
import { gemm } from '../lib/tp/gemm-kernel.js';
import { matmul, rounded, seededValues, ulp, type FloatDType } from '../lib/tp/reference.js';
import { KernbenchError } from '../lib/errors.js';

/** The element types of the matrix unit (i32 has no GEMM path). */
export const GEMM_DTYPES = ['f16', 'bf16', 'f32'] as const satisfies readonly FloatDType[];

const options = (z: Zod) => z.object({
  dtype: z.enum(GEMM_DTYPES).default('f16').describe('element type of x, w and y'),
});

export default defineBench({
  description: 'one GEMM (64x64x64) on one PE through tl.load/dot/store, checked against a JS matmul; crit_ns and achieved vs peak FLOP/s',
  options,
  run,
});

const M = 64;
const N = 64;
const K = 64;
const SEED = 2027;

export interface GemmPoint {
  m: number;
  n: number;
  k: number;
  dtype: FloatDType;
  /** PEs the output columns are split over (1: everything on cube 0, PE 0). */
  pes: number;
  critNs: number;
  achievedGflops: number;
  peakGflops: number;
  /** Elements whose error exceeds the tolerance (1 ulp of dtype at the reference value). */
  wrong: number;
  /** Largest |got - ref| in ulps of dtype at the reference value. */
  maxUlps: number;
  y: Float32Array;
}

/** Matrix-unit peak of `pes` PEs in GFLOP/s (FLOP per ns). */
export function peakGflops(spec: Topology, dtype: FloatDType, pes: number): number {
  const pe = spec.timing.pe;
  const macsPerCycle = dtype === 'f32' ? pe.gemm_macs_per_cycle / 2 : pe.gemm_macs_per_cycle;
  return macsPerCycle * 2 * pe.clock_ghz * pes;
}

/**
 * Run y = x @ w ([m, k] @ [k, n]) as one launch on the main host's SIP 0 and
 * check it. With pes > 1, x is replicated over `pes` PEs of cube 0 and w and
 * y are split by columns, so each PE computes n / pes output columns.
 *
 * Tolerance: tl.dot sums the products exactly as the reference does (f64, same
 * order) and rounds to f32, then tl.to rounds to dtype; the reference rounds the
 * f64 sum to dtype once. Rounding twice differs from rounding once by at most
 * one ulp of dtype (and never for f32), so each element must be within 1 ulp.
 */
export async function measureGemm(torch: Torch, opts: { m: number; n: number; k: number; dtype: FloatDType; pes?: number; seed?: number }): Promise<GemmPoint> {
  const { m, n, k, dtype } = opts;
  const pes = opts.pes ?? 1;
  const seed = opts.seed ?? SEED;
  if (n % pes !== 0) throw new KernbenchError('ERR_UNEVEN_SPLIT', `measureGemm: n must split evenly over ${pes} PEs, got n = ${n}`);
  const xv = seededValues(seed, m * k, dtype);
  const wv = seededValues(seed + 1, k * n, dtype);
  const replicated = new DPPolicy({ pe: 'replicate', numPes: pes });
  const byColumns = new DPPolicy({ pe: 'column_wise', numPes: pes });
  const x = torch.zeros([m, k], { dtype, dp: replicated, name: 'x' });
  const w = torch.zeros([k, n], { dtype, dp: byColumns, name: 'w' });
  const y = torch.zeros([m, n], { dtype, dp: byColumns, name: 'y' });
  await x.copy_(torch.fromArray(xv, { shape: [m, k], dtype }));
  await w.copy_(torch.fromArray(wv, { shape: [k, n], dtype }));
  const h = torch.launch('gemm', gemm, x, w, y);
  await h;
  const got = (await y.numpy()).data;
  const ref = rounded(dtype, matmul(xv, wv, m, k, n).value);
  let wrong = 0;
  let maxUlps = 0;
  for (let i = 0; i < ref.length; i++) {
    const u = Math.abs(got[i] - ref[i]) / ulp(dtype, ref[i]);
    if (!(u <= 1)) wrong++;
    maxUlps = Math.max(maxUlps, u);
  }
  const critNs = h.critPs / 1000;
  return { m, n, k, dtype, pes, critNs, achievedGflops: (2 * m * n * k) / critNs, peakGflops: peakGflops(torch.spec, dtype, pes), wrong, maxUlps, y: got };
}

async function run(torch: Torch, ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const dtype = ctx.options.dtype;
  const noData = ctx.config.noData ?? false;
  const p = await measureGemm(torch, { m: M, n: N, k: K, dtype });
  const checked = noData ? 'not checked (--no-data)' : p.wrong === 0 ? 'OK' : `FAIL: ${p.wrong} of ${M * N} elements beyond 1 ulp`;
  const pct = (100 * p.achievedGflops) / p.peakGflops;
  return [
    {
      bench: ctx.bench,
      algorithm: 'gemm',
      topology: torch.topologyName,
      worldSize: 1,
      nElem: M * N,
      dtype,
      ok: noData || p.wrong === 0,
      critNs: p.critNs,
      lines: [
        `  gemm ${M}x${N}x${K} ${dtype} on (sip 0, cube 0, pe 0): ${checked}${noData ? '' : ` (max error ${p.maxUlps.toFixed(2)} ulp)`}`,
        `  achieved ${p.achievedGflops.toFixed(1)} GFLOP/s of ${p.peakGflops.toFixed(1)} GFLOP/s peak (${pct.toFixed(1)}%)`,
      ],
      outputs: [p.y],
      extra: { achieved_gflops: round3(p.achievedGflops), peak_gflops: p.peakGflops, peak_pct: round3(pct), max_error_ulps: round3(p.maxUlps) },
    },
  ];
}

export function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}

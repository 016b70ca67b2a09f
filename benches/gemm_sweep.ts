// Runs on: main (run; kernels run on the executors of SIP 0's PEs).
// gemm_single_pe's measurement over a small grid of (M, N, K) x f16, bf16, f32
// (or only --dtype when given), one PE each, plus the largest shape with its
// output columns split over 4 PEs of cube 0. Prints one table; every output
// tensor goes into the digest. Achieved GFLOP/s rise with size as the fixed
// HBM load/store latencies are amortised over more MACs.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import type { Torch } from '../lib/host/torch.js';
import type { FloatDType } from '../lib/tp/reference.js';
import { GEMM_DTYPES, measureGemm, round3, type GemmPoint } from './gemm_single_pe.js';

const options = (z: Zod) => z.object({
  dtype: z.enum(GEMM_DTYPES).optional().describe('only this element type (default: f16, bf16 and f32)'),
});

export default defineBench({
  description: 'GEMM sweep: (M, N, K) in {16,64,256} x {64,256} x {64,256} x f16/bf16/f32 on one PE, and 256^3 split over 4 PEs; crit_ns, GFLOP/s, % of peak',
  options,
  table: true,
  run,
});

const MS = [16, 64, 256];
const NS = [64, 256];
const KS = [64, 256];
const DTYPES: FloatDType[] = ['f16', 'bf16', 'f32'];
/** The column-split rows: the largest shape over this many PEs. */
const SPLIT_PES = 4;

async function run(torch: Torch, ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const dtypes: FloatDType[] = ctx.options.dtype === undefined ? DTYPES : [ctx.options.dtype];
  const points: GemmPoint[] = [];
  for (const dtype of dtypes) {
    for (const m of MS) for (const n of NS) for (const k of KS) points.push(await measureGemm(torch, { m, n, k, dtype }));
    const big = { m: MS[MS.length - 1], n: NS[NS.length - 1], k: KS[KS.length - 1] };
    points.push(await measureGemm(torch, { ...big, dtype, pes: SPLIT_PES }));
  }
  const header = ['M', 'N', 'K', 'dtype', 'pes', 'crit_ns', 'achieved_GFLOPs', 'peak%', 'ok'];
  const rows = points.map((p) => [p.m, p.n, p.k, p.dtype, p.pes, p.critNs.toFixed(3), p.achievedGflops.toFixed(1), ((100 * p.achievedGflops) / p.peakGflops).toFixed(1), p.wrong === 0 ? 'ok' : `FAIL(${p.wrong})`].map(String));
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const fmt = (r: string[]) => `  ${r.map((v, c) => v.padStart(widths[c])).join('  ')}`;
  const failed = points.filter((p) => p.wrong > 0).length;
  const best = Math.max(...points.filter((p) => p.pes === 1).map((p) => (100 * p.achievedGflops) / p.peakGflops));
  return [
    {
      bench: ctx.bench,
      algorithm: 'gemm',
      topology: torch.topologyName,
      worldSize: 1,
      nElem: points.length,
      dtype: dtypes.join(','),
      ok: failed === 0,
      // The headline figure of a sweep: its slowest point.
      critNs: Math.max(...points.map((p) => p.critNs)),
      lines: [fmt(header), ...rows.map(fmt), `  ${points.length - failed} of ${points.length} points within 1 ulp of the JS reference`],
      outputs: points.map((p) => p.y),
      table: { columns: header, rows },
      extra: { points: points.length, best_single_pe_peak_pct: round3(best) },
    },
  ];
}

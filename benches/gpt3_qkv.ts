// Runs on: main (run) and executor threads (worker, one call per rank).
// The seed's gpt3_qkv bench: GPT-3 175B's QKV projection, x [s b, h] @
// W_qkv [h, 3h] (+ b), as a ColumnParallelLinear on one SIP and then split over
// every SIP (TP = SIP count). With data each rank's output columns are checked
// against a JS matmul (the shape shrunk by --scale, as a full-size JS matmul
// is out of reach); with --no-data the full shape runs.
//
// Beside each simulated time it prints the analytical roofline time of the
// rank's GEMM: max(FLOPs / the PE's peak, bytes / the HBM bandwidth) with the
// bytes of x, the weight slice, the bias and the output. --plot FILE writes
// the seed's comparison figure (its evaluation harness, ADR-0043 D6):
// simulated against roofline time per point, and --reference-us (an external
// simulator's figure; the original used 366 us) on the upper panel of a
// broken axis.
import { writeFileSync } from 'node:fs';
import { KernbenchError } from '../lib/errors.js';
import type { TopLevelSpec } from 'vega-lite';
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { renderSvg } from '../lib/bench/plots.js';
import type { Torch } from '../lib/host/torch.js';
import { ColumnParallelLinear, parallelState } from '../lib/tp/index.js';
import { MODEL_PRESETS } from '../lib/tp/presets.js';
import { matmul, rounded, seededValues, ulp, type FloatDType } from '../lib/tp/reference.js';
import { GEMM_DTYPES, peakGflops } from './gemm_single_pe.js';

const options = (z: Zod) => z.object({
  dtype: z.enum(GEMM_DTYPES).default('f16').describe('element type'),
  scale: z.number().int().positive().default(64).describe('divide s and h by this (1: GPT-3 full size, with --no-data)'),
  microBatch: z.number().int().positive().default(1).describe('b: sequences'),
  plot: z.string().optional().describe('write the simulated-vs-roofline comparison figure (SVG) here'),
  referenceUs: z.number().positive().optional().describe('an external reference time in us, drawn on a broken axis in --plot'),
});

export default defineBench({
  description: "GPT-3 175B's QKV projection (ColumnParallelLinear h -> 3h) on one SIP and over every SIP, checked against a JS matmul; simulated vs roofline time",
  options,
  run,
});

/** Largest product (M h 3h) checked with data: a JS matmul beyond it takes minutes. */
const MAX_CHECKED_MACS = 2 ** 27;
const SEED = 175;

export interface QkvShape {
  rows: number;
  hidden: number;
}

export interface QkvRank {
  rank: number;
  forwardNs: number;
  wrong: number;
  y: Float32Array;
}

export async function qkvWorker(rank: number, d: QkvShape, dtype: FloatDType, noData: boolean, torch: Torch): Promise<QkvRank> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const ws = torch.distributed.getWorldSize();
  parallelState.initializeModelParallel(torch, { tensorModelParallelSize: ws });
  const qkv = new ColumnParallelLinear(torch, { inFeatures: d.hidden, outFeatures: 3 * d.hidden, dtype });
  const x = torch.zeros([d.rows, d.hidden], { dtype, name: 'x' });
  const p = noData ? null : qkvParameters(d, dtype);
  if (p) {
    await qkv.loadFullWeight(p.w);
    await qkv.loadFullBias(p.b);
    await x.copy_(torch.fromArray(p.x, { shape: [d.rows, d.hidden], dtype }));
  }
  const t0 = torch.host.clockPs;
  const y = await qkv.forward(x);
  const out = noData ? new Float32Array(0) : (await y.numpy()).data;
  const forwardNs = (torch.host.clockPs - t0) / 1000;
  let wrong = 0;
  if (p) {
    // This rank's columns of the JS product, within 1 ulp (the kernel rounds f64 -> f32 -> dtype).
    const n = qkv.outputSizePerPartition;
    const wr = new Float32Array(d.hidden * n);
    for (let r = 0; r < d.hidden; r++) wr.set(p.w.subarray(r * 3 * d.hidden + rank * n, r * 3 * d.hidden + (rank + 1) * n), r * n);
    const ref = rounded(dtype, matmul(p.x, wr, d.rows, d.hidden, n, p.b.subarray(rank * n, (rank + 1) * n)).value);
    for (let i = 0; i < ref.length; i++) if (!(Math.abs(out[i] - ref[i]) <= ulp(dtype, ref[i]))) wrong++;
  }
  parallelState.destroyModelParallel(torch);
  return { rank, forwardNs, wrong, y: out };
}

function qkvParameters(d: QkvShape, dtype: FloatDType): { x: Float32Array; w: Float32Array; b: Float32Array } {
  const bound = 1 / Math.sqrt(d.hidden);
  return {
    x: seededValues(SEED, d.rows * d.hidden, dtype),
    w: seededValues(SEED + 1, d.hidden * 3 * d.hidden, dtype, -bound, bound),
    b: seededValues(SEED + 2, 3 * d.hidden, dtype, -bound, bound),
  };
}

export interface RooflinePoint {
  label: string;
  simulatedUs: number;
  rooflineUs: number;
}

async function run(torch: Torch, ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const o = ctx.options;
  const noData = ctx.config.noData ?? false;
  const g = MODEL_PRESETS['gpt3-175b'];
  const d: QkvShape = { rows: (g.seqLength / o.scale) * o.microBatch, hidden: g.hiddenSize / o.scale };
  if (!Number.isInteger(d.rows) || !Number.isInteger(d.hidden)) throw new KernbenchError('ERR_BENCH_OPTION_UNFIT', `gpt3_qkv: --scale must divide s = ${g.seqLength} and h = ${g.hiddenSize}, got ${o.scale}`);
  if (!noData && d.rows * d.hidden * 3 * d.hidden > MAX_CHECKED_MACS) throw new KernbenchError('ERR_BENCH_TOO_LARGE', `gpt3_qkv: with data the JS check is limited to ${MAX_CHECKED_MACS} multiply-adds; use a larger --scale or --no-data, got ${d.rows} x ${d.hidden} x ${3 * d.hidden}`);
  const sips = torch.spec.system.sips.count;
  const spec = torch.spec;
  const bpe = o.dtype === 'f32' ? 4 : 2;
  const points: RooflinePoint[] = [];
  const results: BenchResult[] = [];
  for (const ws of sips > 1 ? [1, sips] : [1]) {
    const ranks = await torch.multiprocessing.spawn(qkvWorker, { args: [d, o.dtype, noData], nprocs: ws });
    const n = (3 * d.hidden) / ws;
    const flops = 2 * d.rows * d.hidden * n;
    const bytes = bpe * (d.rows * d.hidden + d.hidden * n + n + d.rows * n);
    const rooflineNs = Math.max(flops / peakGflops(spec, o.dtype, 1), bytes / spec.timing.memory.hbm.bandwidth_gb_s);
    const critNs = Math.max(...ranks.map((r) => r.forwardNs));
    const wrong = ranks.reduce((a, r) => a + r.wrong, 0);
    const label = ws === 1 ? 'one SIP' : `TP=${ws}`;
    points.push({ label, simulatedUs: critNs / 1000, rooflineUs: rooflineNs / 1000 });
    results.push({
      bench: ctx.bench,
      algorithm: ws === 1 ? 'one_sip' : 'tp',
      topology: torch.topologyName,
      worldSize: ws,
      nElem: d.rows * 3 * d.hidden,
      dtype: o.dtype,
      ok: wrong === 0,
      critNs,
      lines: [
        `  QKV [${d.rows}, ${d.hidden}] @ [${d.hidden}, ${3 * d.hidden}] ${o.dtype}, ${label}: ${noData ? 'not checked (--no-data)' : wrong === 0 ? 'OK (every element within 1 ulp of the JS matmul)' : `FAIL: ${wrong} elements beyond 1 ulp`}`,
        `  simulated ${(critNs / 1000).toFixed(3)} us per rank, roofline ${(rooflineNs / 1000).toFixed(3)} us (${((100 * rooflineNs) / critNs).toFixed(1)}% of simulated)`,
      ],
      outputs: ranks.map((r) => r.y),
      extra: { roofline_ns: rooflineNs, flops_per_rank: flops },
    });
  }
  if (o.plot) {
    writeFileSync(o.plot, await comparisonFigure(`GPT-3 QKV [${d.rows}, ${d.hidden}] x [${d.hidden}, ${3 * d.hidden}] ${o.dtype}`, points, o.referenceUs));
    ctx.log(`wrote ${o.plot}`);
  }
  return results;
}

/**
 * Simulated and roofline time per point as grouped bars; with a reference,
 * a broken axis: the upper panel spans the reference, the lower one the points.
 */
export function comparisonFigure(title: string, points: RooflinePoint[], referenceUs?: number): Promise<string> {
  const values = points.flatMap((p) => [
    { point: p.label, series: 'simulated', us: p.simulatedUs },
    { point: p.label, series: 'roofline', us: p.rooflineUs },
  ]);
  const top = Math.max(...values.map((v) => v.us)) * 1.1;
  const bars = (domain: [number, number], height: number, axisTitle: string | null) => ({
    height,
    width: 360,
    data: { values },
    mark: { type: 'bar', clip: true },
    encoding: {
      x: { field: 'point', type: 'nominal', title: null },
      xOffset: { field: 'series' },
      y: { field: 'us', type: 'quantitative', scale: { domain }, title: axisTitle },
      color: { field: 'series', type: 'nominal', title: null },
    },
  });
  if (referenceUs === undefined) return renderSvg({ $schema: 'https://vega.github.io/schema/vega-lite/v6.json', title, ...bars([0, top], 260, 'time per rank (us)') } as TopLevelSpec);
  const upper = {
    height: 80,
    width: 360,
    layer: [
      { data: { values: [{ us: referenceUs, label: `reference ${referenceUs} us` }] }, mark: { type: 'rule', strokeDash: [4, 3], color: 'black' }, encoding: { y: { field: 'us', type: 'quantitative', scale: { domain: [referenceUs * 0.8, referenceUs * 1.2] }, title: null } } },
      { data: { values: [{ us: referenceUs, label: `reference ${referenceUs} us` }] }, mark: { type: 'text', align: 'left', dy: -6, x: 4 }, encoding: { y: { field: 'us', type: 'quantitative' }, text: { field: 'label' } } },
    ],
  };
  return renderSvg({ $schema: 'https://vega.github.io/schema/vega-lite/v6.json', title, vconcat: [upper, bars([0, top], 200, 'time per rank (us)')], spacing: 6 } as TopLevelSpec);
}

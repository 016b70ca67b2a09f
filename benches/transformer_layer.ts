// Runs on: main (run) and executor threads (worker, one call per rank).
// One Megatron transformer layer (lib/tp/transformer-layer.ts) forward on
// every SIP, tensor parallel over all of them (TP degree = SIP count; sweep it
// with --over system.sips.count=1,2,4,8), in up to three variants: tp (two
// all-reduces), tp+sp (sequence parallelism: two all-gathers and two
// reduce-scatters), tp+sp+overlap (the same collectives fused with their
// GEMMs, lib/tp/collective-matmul.ts), or each in turn (--variant all).
//
// With data (the tiny presets) every rank's y is checked against the
// single-device JS reference (lib/tp/layer-reference.ts). With --no-data the
// full-size presets run: kernels are timed by the cost model on timing-only
// tiles, no values are computed.
//
// It reports where the time goes on the slowest rank: per block the GEMM,
// attention and vector kernels' time, each collective's time and bytes, the
// exposed communication (a collective in flight and no kernel computing), and
// the layer's model FLOPs (GEMMs and attention, summed over ranks), FLOP/s and
// share of the peak of the PEs that compute (one per rank, or --gemm-pes per
// rank when the linear GEMMs split over PEs of the rank's cube, decision 0116).
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { KernbenchError } from '../lib/errors.js';
import type { Torch } from '../lib/host/torch.js';
import { parallelState } from '../lib/tp/index.js';
import { MODEL_PRESETS, PRESET_NAMES, type PresetName } from '../lib/tp/presets.js';
import { TransformerLayer, layerConfig, type TransformerLayerConfig } from '../lib/tp/transformer-layer.js';
import { layerInput, layerParameters, layerReference } from '../lib/tp/layer-reference.js';
import { COLLECTIVE_KINDS, LayerTimeline, breakdown, byCollectiveKind, type Breakdown, type Span } from '../lib/tp/timeline.js';
import { unitRoundoff } from '../lib/tp/reference.js';
import { GEMM_DTYPES } from './gemm_single_pe.js';

export const VARIANTS = ['tp', 'tp+sp', 'tp+sp+overlap'] as const;
export type Variant = (typeof VARIANTS)[number];

const options = (z: Zod) => z.object({
  preset: z.enum(PRESET_NAMES).default('tiny').describe('model shape (lib/tp/presets.ts); full-size presets need --no-data'),
  variant: z.enum([...VARIANTS, 'all']).default('all').describe('tp: all-reduces; tp+sp: sequence parallelism; tp+sp+overlap: its collectives fused with the GEMMs; all: each in turn'),
  microBatch: z.number().int().positive().default(1).describe('b: sequences per forward'),
  dtype: z.enum(GEMM_DTYPES).default('f16').describe('element type of weights and activations'),
  tp: z.number().int().positive().optional().describe('tensor-parallel degree; must equal the SIP count (default: the SIP count)'),
  gemmPes: z.number().int().positive().default(1).describe("PEs of the layer's cube each linear GEMM splits over, by output rows (at most the cube's PEs; fused overlap kernels stay on one PE)"),
});

export default defineBench({
  description: 'one Megatron transformer layer (attention + MLP) tensor parallel over every SIP, with or without sequence parallelism; time breakdown, FLOPs and share of peak',
  options,
  run,
});

const SEED = 53;

/** The layer's configuration for a preset, micro-batch, dtype and variant. */
export function presetConfig(preset: PresetName, microBatch: number, dtype: TransformerLayerConfig['dtype'], variant: Variant, gemmPes = 1): TransformerLayerConfig {
  const { source: _source, ...shape } = MODEL_PRESETS[preset];
  return layerConfig({ ...shape, microBatchSize: microBatch, dtype, sequenceParallel: variant !== 'tp', overlap: variant === 'tp+sp+overlap', gemmPes });
}

export interface LayerRankResult {
  rank: number;
  /** Virtual time of the forward on this rank, first launch to y ready, in ns. */
  forwardNs: number;
  spans: Span[];
  /** This rank's y (its rows with sequence parallelism); empty with --no-data. */
  y: Float32Array;
}

export async function layerWorker(rank: number, c: TransformerLayerConfig, noData: boolean, torch: Torch): Promise<LayerRankResult> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const ws = torch.distributed.getWorldSize();
  parallelState.initializeModelParallel(torch, { tensorModelParallelSize: ws });
  const layer = new TransformerLayer(torch, c);
  const x = torch.zeros([layer.rows, c.hiddenSize], { dtype: c.dtype, name: 'x' });
  if (!noData) {
    await layer.load(layerParameters(c, SEED));
    const full = layerInput(c, SEED - 1);
    const mine = c.sequenceParallel ? full.subarray(rank * layer.rows * c.hiddenSize, (rank + 1) * layer.rows * c.hiddenSize) : full;
    await x.copy_(torch.fromArray(mine, { shape: [layer.rows, c.hiddenSize], dtype: c.dtype }));
  }
  const timeline = new LayerTimeline();
  const t0 = torch.host.clockPs;
  const y = await layer.forward(x, timeline);
  const out = noData ? new Float32Array(0) : (await y.numpy()).data;
  const forwardNs = (torch.host.clockPs - t0) / 1000;
  parallelState.destroyModelParallel(torch);
  return { rank, forwardNs, spans: timeline.spans, y: out };
}

/** Per element: |y - ref| <= TOLERANCE_ULPS u (1 + |ref|), u the dtype's unit roundoff (docs/tensor-parallel.md). */
export const TOLERANCE_ULPS = 8;

export interface Check {
  wrong: number;
  maxErr: number;
}

/** This rank's y against the reference's rows it holds. */
export function checkRank(c: TransformerLayerConfig, ref: Float32Array, r: LayerRankResult, rows: number): Check {
  const off = c.sequenceParallel ? r.rank * rows * c.hiddenSize : 0;
  const u = unitRoundoff(c.dtype);
  let wrong = 0, maxErr = 0;
  for (let i = 0; i < r.y.length; i++) {
    const want = ref[off + i];
    const err = Math.abs(r.y[i] - want);
    if (!(err <= TOLERANCE_ULPS * u * (1 + Math.abs(want)))) wrong++;
    maxErr = Math.max(maxErr, err / (u * (1 + Math.abs(want))));
  }
  return { wrong, maxErr };
}

/** The slowest rank's breakdown, and the FLOPs of every rank. */
export function summarise(ranks: LayerRankResult[]): { slowest: LayerRankResult; b: Breakdown; flops: number } {
  const slowest = ranks.reduce((a, r) => (r.forwardNs > a.forwardNs ? r : a));
  return { slowest, b: breakdown(slowest.spans), flops: ranks.reduce((a, r) => a + breakdown(r.spans).flops, 0) };
}

async function run(torch: Torch, ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const o = ctx.options;
  const ws = torch.spec.system.sips.count;
  if (o.tp !== undefined && o.tp !== ws) throw new KernbenchError('ERR_BENCH_OPTION_UNFIT', `transformer_layer: --tp must equal the SIP count (${ws}); choose it with --set system.sips.count=${o.tp}, got --tp ${o.tp}`);
  const noData = ctx.config.noData ?? false;
  const t = torch.spec.timing.pe;
  const peakPerPe = (o.dtype === 'f32' ? t.gemm_macs_per_cycle / 2 : t.gemm_macs_per_cycle) * 2 * t.clock_ghz * 1e9;
  const results: BenchResult[] = [];
  for (const variant of o.variant === 'all' ? VARIANTS : [o.variant]) {
    const c = presetConfig(o.preset, o.microBatch, o.dtype, variant, o.gemmPes);
    const ranks = await torch.multiprocessing.spawn(layerWorker, { args: [c, noData], nprocs: ws });
    const { slowest, b, flops } = summarise(ranks);
    const lines = [`  ${o.preset} ${variant} TP=${ws} b=${c.microBatchSize} s=${c.seqLength} h=${c.hiddenSize} heads=${c.numAttentionHeads}/${c.numQueryGroups} ffn=${c.ffnHiddenSize} ${c.dtype}${c.gemmPes > 1 ? ` gemm_pes=${c.gemmPes}` : ''}`];
    let ok = true;
    if (!noData) {
      const ref = layerReference(c, layerParameters(c, SEED), layerInput(c, SEED - 1));
      const rows = c.sequenceParallel ? (c.seqLength * c.microBatchSize) / ws : c.seqLength * c.microBatchSize;
      const checks = ranks.map((r) => checkRank(c, ref, r, rows));
      ok = checks.every((k) => k.wrong === 0);
      const worst = Math.max(...checks.map((k) => k.maxErr));
      lines.push(`  check against the single-device reference: ${ok ? 'OK' : `FAIL (${checks.reduce((a, k) => a + k.wrong, 0)} elements beyond tolerance)`}; max error ${worst.toFixed(1)} u (1 + |ref|), tolerance ${TOLERANCE_ULPS}`);
    }
    const critNs = slowest.forwardNs;
    const flopPerS = flops / (critNs * 1e-9);
    // The PEs that compute: one per rank, or gemmPes per rank when the GEMMs split (the fused overlap kernels do not).
    const computing = ws * (c.overlap ? 1 : c.gemmPes);
    const peakPct = (100 * flopPerS) / (peakPerPe * computing);
    lines.push(...breakdownLines(b, slowest.rank));
    lines.push(`  layer: ${formatFlops(flops)} FLOP in ${critNs.toFixed(3)} ns = ${formatFlops(flopPerS)} FLOP/s, ${peakPct.toFixed(1)}% of the ${computing} computing PEs' peak (${formatFlops(peakPerPe * computing)} FLOP/s)`);
    results.push({
      bench: ctx.bench,
      algorithm: variant,
      topology: torch.topologyName,
      worldSize: ws,
      nElem: c.seqLength * c.microBatchSize * c.hiddenSize,
      dtype: c.dtype,
      ok,
      critNs,
      lines,
      outputs: ranks.map((r) => r.y),
      extra: {
        flops,
        flop_per_s: flopPerS,
        peak_pct: peakPct,
        compute_ns: b.computeNs,
        comm_ns: b.commNs,
        exposed_comm_ns: b.exposedCommNs,
        comm_bytes: b.collectives.reduce((a, k) => a + k.bytes, 0),
      },
      sweepColumns: sweepColumns(b, critNs, flops),
    });
  }
  return results;
}

/** ns rounded to whole ps, so that differences of sums carry no float dust. */
const ps = (ns: number): number => Math.round(ns * 1000) / 1000;

/**
 * The slowest rank's breakdown as a sweep's columns. The time_* parts add up to
 * crit_ns: the kernels' time by kind (a fused kernel's GEMM minus its wait), the
 * exposed communication, and the rest (host time between launches, in no kernel
 * or collective). Kernels are awaited one after another, so they never overlap
 * each other and their sum is their union. Then each collective kind's time in
 * flight, all communication, its bytes and the layer's FLOPs (all ranks).
 */
export function sweepColumns(b: Breakdown, critNs: number, flops: number): Record<string, number> {
  const sum = (f: (k: Breakdown['blocks'][number]) => number) => ps(b.blocks.reduce((a, k) => a + f(k), 0));
  const parts = { time_gemm_ns: sum((k) => k.gemmNs), time_attention_ns: sum((k) => k.attentionNs), time_vector_ns: sum((k) => k.vectorNs), time_exposed_comm_ns: ps(b.exposedCommNs) };
  const kinds = byCollectiveKind(b);
  return {
    ...parts,
    time_other_ns: ps(critNs - Object.values(parts).reduce((a, x) => a + x, 0)),
    ...Object.fromEntries(COLLECTIVE_KINDS.map((k) => [`${k}_ns`, ps(kinds[k].ns)])),
    comm_ns: ps(b.commNs),
    comm_bytes: b.collectives.reduce((a, k) => a + k.bytes, 0),
    flops,
  };
}

/** The breakdown as the bench prints it. */
export function breakdownLines(b: Breakdown, rank: number): string[] {
  const f = (ns: number) => ns.toFixed(3).padStart(16);
  const lines = [`  rank ${rank} (slowest)      gemm_ns    attention_ns       vector_ns         comm_ns  exposed_comm_ns`];
  for (const k of b.blocks) lines.push(`  ${k.block.padEnd(16)}${f(k.gemmNs)}${f(k.attentionNs)}${f(k.vectorNs)}${f(k.commNs)}${f(k.exposedCommNs)}`);
  for (const k of b.collectives) lines.push(`  ${k.block} ${k.name}: ${k.ns.toFixed(3)} ns, ${k.bytes} bytes`);
  lines.push(`  compute ${b.computeNs.toFixed(3)} ns, communication ${b.commNs.toFixed(3)} ns, exposed ${b.exposedCommNs.toFixed(3)} ns`);
  return lines;
}

function formatFlops(x: number): string {
  const units: [number, string][] = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  const [scale, unit] = units.find(([s]) => x >= s) ?? [1, ''];
  return `${(x / scale).toFixed(3)} ${unit}`;
}

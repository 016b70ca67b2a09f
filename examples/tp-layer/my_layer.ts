// A user's own tensor-parallel block, built from kernbench's public entry
// points only: a weightless RMSNorm kernel written with `tl`, then Megatron's
// column- and row-parallel linear layers (up h -> 2h, down 2h -> h, one
// all-reduce), timed with a LayerTimeline. Run it from this folder with
//   kernbench run --bench ./my_layer.ts
// Every rank must end with the same y; the bench prints where the time went.
import { defineKernel, full, broadcastCol, unary, type TensorDesc } from 'kernbench/kernel';
import { defineBench, z, type BenchContext, type BenchResult } from 'kernbench/bench';
import { ColumnParallelLinear, RowParallelLinear, LayerTimeline, breakdown, parallelState, type Torch } from 'kernbench';

/** y = x / sqrt(mean(x^2) + eps), per row; the row mean is a dot with a constant column. */
export const rmsNorm = defineKernel(import.meta.url, 'rmsNorm', async (tl, x: TensorDesc, y: TensorDesc) => {
  const v = tl.to(await tl.load(x), 'f32');
  const h = v.shape[1];
  const meanSquare = tl.dot(tl.mul(v, v), full(tl, [h, 1], 'f32', 1 / h));
  const rstd = unary(tl, tl.add(meanSquare, 1e-5), (s) => 1 / Math.sqrt(s));
  await tl.store(y, tl.to(tl.mul(v, broadcastCol(tl, rstd, h)), y.dtype));
});

/** Small exact-ish values: the same on every rank. */
const values = (n: number, k: number) => Float32Array.from({ length: n }, (_, i) => (((i * k) % 13) - 6) / 16);

export async function worker(rank: number, rows: number, hidden: number, torch: Torch) {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  parallelState.initializeModelParallel(torch, { tensorModelParallelSize: torch.distributed.getWorldSize() });
  const up = new ColumnParallelLinear(torch, { inFeatures: hidden, outFeatures: 2 * hidden, bias: false });
  const down = new RowParallelLinear(torch, { inFeatures: 2 * hidden, outFeatures: hidden, bias: false });
  await up.loadFullWeight(values(hidden * 2 * hidden, 5));
  await down.loadFullWeight(values(2 * hidden * hidden, 7));
  const x = torch.zeros([rows, hidden], { dtype: 'f16' });
  await x.copy_(torch.fromArray(values(rows * hidden, 3), { shape: [rows, hidden], dtype: 'f16' }));

  const timeline = new LayerTimeline();
  const normed = torch.empty([rows, hidden], { dtype: 'f16' });
  const k = torch.launch('rms_norm', rmsNorm, x, normed);
  await k;
  timeline.record(k, 'vector');
  const y = await down.forward(await up.forward(normed, timeline), timeline);
  const out = await y.numpy();
  const b = breakdown(timeline.spans);
  return { y: Array.from(out.data), flops: b.flops, collectives: b.collectives.map((c) => c.name).join(','), exposedNs: b.exposedCommNs, spanNs: b.spanNs };
}

const options = z.object({ rows: z.number().int().positive().default(8).describe('tokens') });

async function run(torch: Torch, ctx: BenchContext<z.output<typeof options>>): Promise<BenchResult[]> {
  const ws = torch.spec.system.sips.count;
  const hidden = 32;
  const ranks = await torch.multiprocessing.spawn(worker, { args: [ctx.options.rows, hidden], nprocs: ws });
  const same = ranks.every((r) => r.y.every((v, i) => v === ranks[0].y[i]));
  return [{
    bench: ctx.bench, algorithm: 'my_layer', topology: torch.topologyName, worldSize: ws, nElem: ctx.options.rows * hidden, dtype: 'f16',
    ok: same, critNs: Math.max(...ranks.map((r) => r.spanNs)),
    lines: [`  ranks agree: ${same}; ${ranks[0].collectives}; exposed communication ${ranks[0].exposedNs.toFixed(3)} ns`],
    outputs: ranks.map((r) => Float32Array.from(r.y)),
    extra: { flops: ranks.reduce((a, r) => a + r.flops, 0), collectives: ranks[0].collectives, y0: ranks[0].y[0] },
  }];
}

export default defineBench({ description: "a user's tensor-parallel block: RMSNorm kernel + column/row parallel linear", options, run });

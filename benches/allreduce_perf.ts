// Runs on: main (run) and executor threads (worker, one call per rank).
// nccl-tests' all_reduce_perf, in virtual time: for each size from
// --min-bytes to --max-bytes (times --step-factor), every rank all-reduces a
// buffer of that size with the configured algorithm, and the table reports
// the time, the algorithm bandwidth (size / time) and the bus bandwidth
// (algbw * 2(n-1)/n, comparable across rank counts), with #wrong elements.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { bytesPerElement, type DType } from '../lib/dtype/index.js';
import type { ReduceOp } from '../lib/ccl/reduce-op.js';
import { UsageError } from '../lib/errors.js';
import type { Torch } from '../lib/host/torch.js';
import { tabulate, tabulateF32 } from '../lib/tabulate.js';

export const description = 'nccl-tests style all-reduce table over sizes: time (virtual us), algbw, busbw, #wrong (--min-bytes --max-bytes --step-factor --op --dtype)';

/** Each rank's input value for element i: small integers, so sums and products are exact in every dtype. */
const input = (rank: number, i: number): number => ((rank + i) % 3) + 1;

function expected(op: ReduceOp, ws: number, i: number): number {
  const vals = tabulate(ws, (r) => input(r, i));
  switch (op) {
    case 'sum':
      return vals.reduce((a, b) => a + b, 0);
    case 'prod':
      return vals.reduce((a, b) => a * b, 1);
    case 'min':
      return Math.min(...vals);
    case 'max':
      return Math.max(...vals);
    case 'avg':
      return vals.reduce((a, b) => a + b, 0) / ws;
  }
}

interface Row {
  bytes: number;
  count: number;
  critNs: number;
  wrong: number;
}

export async function worker(rank: number, sizes: number[], dtype: DType, op: ReduceOp, noData: boolean, torch: Torch): Promise<{ rows: Row[]; out: Float32Array }> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const ws = torch.distributed.getWorldSize();
  const rows: Row[] = [];
  let last: Float32Array = new Float32Array(0);
  for (const bytes of sizes) {
    const count = bytes / bytesPerElement(dtype);
    const t = torch.zeros([count], { dtype });
    await t.copy_(torch.fromArray(tabulateF32(count, (i) => input(rank, i))));
    const work = await torch.distributed.allReduce(t, { op });
    const out = (await t.numpy()).data;
    let wrong = 0;
    for (let i = 0; i < count && !noData; i++) {
      const want = expected(op, ws, i);
      // avg divides in the dtype: allow its rounding, nothing else.
      if (op === 'avg' ? Math.abs(out[i] - want) > Math.abs(want) * 2 ** -7 : out[i] !== want) wrong++;
    }
    rows.push({ bytes, count, critNs: work.critNs, wrong });
    last = out;
    await torch.distributed.barrier();
  }
  return { rows, out: last };
}

function num(ctx: BenchContext, key: string, dflt: number): number {
  const v = ctx.config.options?.[key];
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${key} takes a positive number, got '${v}'`);
  return n;
}

export async function run(torch: Torch, ctx: BenchContext): Promise<BenchResult[]> {
  const dtype = ctx.config.dtype ?? 'f32';
  const bpe = bytesPerElement(dtype);
  const op = (ctx.config.options?.op ?? 'sum') as ReduceOp;
  const minBytes = num(ctx, 'min-bytes', 8);
  const maxBytes = num(ctx, 'max-bytes', 1 << 20);
  const factor = num(ctx, 'step-factor', 2);
  if (factor <= 1) throw new UsageError(`--step-factor must be > 1, got ${factor}`);
  const ws = ctx.ccl.world_size ?? torch.spec.system.sips.count;
  const sizes: number[] = [];
  for (let b = minBytes; b <= maxBytes; b *= factor) {
    const aligned = Math.max(bpe * ws, Math.floor(b / bpe) * bpe);
    if (sizes[sizes.length - 1] !== aligned) sizes.push(aligned);
  }
  const ranks = (await torch.multiprocessing.spawn(worker, { args: [sizes, dtype, op, ctx.config.noData ?? false], nprocs: ws })) as { rows: Row[]; out: Float32Array }[];
  const lines = [
    `# all_reduce_perf (virtual time): ${ctx.ccl.algorithm} on ${torch.topologyName}, ${ws} ranks, ${dtype}, op ${op}`,
    `#        size         count   type   redop      time(us)   algbw(GB/s)   busbw(GB/s)  #wrong`,
  ];
  const table: (string | number)[][] = [];
  let busSum = 0;
  let wrongTotal = 0;
  let crit = 0;
  sizes.forEach((bytes, i) => {
    const critNs = Math.max(...ranks.map((r) => r.rows[i].critNs));
    const wrong = ranks.reduce((a, r) => a + r.rows[i].wrong, 0);
    const algbw = bytes / critNs; // bytes per ns = GB/s
    const busbw = (algbw * 2 * (ws - 1)) / ws;
    busSum += busbw;
    wrongTotal += wrong;
    crit = Math.max(crit, critNs);
    table.push([bytes, bytes / bpe, dtype, op, (critNs / 1000).toFixed(3), algbw.toFixed(3), busbw.toFixed(3), wrong]);
    lines.push(
      `${String(bytes).padStart(13)} ${String(bytes / bpe).padStart(13)} ${dtype.padStart(6)} ${op.padStart(7)} ${(critNs / 1000).toFixed(3).padStart(13)} ${algbw.toFixed(3).padStart(13)} ${busbw.toFixed(3).padStart(13)} ${String(wrong).padStart(7)}`,
    );
  });
  lines.push(ctx.config.noData ? '# Out of bounds values : not checked (--no-data)' : `# Out of bounds values : ${wrongTotal} ${wrongTotal === 0 ? 'OK' : 'FAILED'}`);
  lines.push(`# Avg bus bandwidth    : ${(busSum / sizes.length).toFixed(3)} GB/s`);
  return [
    {
      bench: ctx.bench,
      algorithm: ctx.ccl.algorithm,
      topology: torch.topologyName,
      worldSize: ws,
      nElem: sizes[sizes.length - 1] / bpe,
      dtype,
      ok: wrongTotal === 0,
      critNs: crit,
      lines,
      outputs: ranks.map((r) => r.out),
      table: { columns: ['size_bytes', 'count', 'type', 'redop', 'time_us', 'algbw_GBs', 'busbw_GBs', 'wrong'], rows: table },
      extra: { avgBusbwGBs: Number((busSum / sizes.length).toFixed(3)), sizes: sizes.length },
    },
  ];
}

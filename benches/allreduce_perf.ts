// Runs on: main (run) and executor threads (worker, one call per rank).
// nccl-tests' all_reduce_perf, in virtual time: for each size from
// --min-bytes to --max-bytes (times --step-factor), every rank all-reduces a
// buffer of that size with the configured algorithm, and the table reports
// the time, the algorithm bandwidth (size / time) and the bus bandwidth
// (algbw * 2(n-1)/n, comparable across rank counts), with #wrong elements.
//
// Device memory is not reused within a run, so every size of the sweep is
// allocated once on each rank: the sweep is refused before any rank starts
// when the sum of its sizes does not fit (see fitsInMemory).
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, z } from '../lib/bench/define.js';
import { DEFAULT_ARENA_BYTES } from '../lib/config/plan.js';
import { bytesPerElement, DTYPES, type DType } from '../lib/dtype/index.js';
import { REDUCE_OPS, type ReduceOp } from '../lib/ccl/reduce-op.js';
import { UsageError } from '../lib/errors.js';
import type { Torch } from '../lib/host/torch.js';
import { tabulate, tabulateF32 } from '../lib/tabulate.js';

/** The largest --max-bytes: the session's arena, the host memory that backs every device (lib/config/plan.ts). */
export const MAX_BYTES_CAP = DEFAULT_ARENA_BYTES;

export const options = z
  .object({
    minBytes: z.number().int().positive().default(8).describe('smallest buffer size in bytes'),
    maxBytes: z.number().int().positive().max(MAX_BYTES_CAP, `at most ${MAX_BYTES_CAP} (1 GiB, the session's memory arena)`).default(1 << 20).describe('largest buffer size in bytes'),
    stepFactor: z.number().gt(1).default(2).describe('multiply the size by this between rows'),
    op: z.enum(REDUCE_OPS).default('sum').describe('reduction'),
    dtype: z.enum(DTYPES).default('f32').describe('element type'),
  })
  .refine((o) => o.minBytes <= o.maxBytes, { message: '--min-bytes must not exceed --max-bytes' });

/** Each rank's input value for element i: small integers, so sums and products are exact in every dtype. */
const input = (rank: number, i: number): number => ((rank + i) % 3) + 1;

/**
 * Rank `rank`'s input of `count` elements. It depends on rank mod 3 only, so the ranks of
 * a thread share three arrays per size, built once and only read (copy_ reads its source):
 * a fresh array per rank was 64 MiB of garbage at p = 1024 x 64 KiB, whose memory the
 * process kept through the collective (docs/benchmarks.md, "Peak memory").
 */
function inputOf(rank: number, count: number): Float32Array {
  if (inputs?.count !== count) inputs = { count, byResidue: [] };
  const r = rank % 3;
  return (inputs.byResidue[r] ??= tabulateF32(count, (i) => input(r, i)));
}
let inputs: { count: number; byResidue: Float32Array[] } | undefined;

/**
 * The reduced value of element i. Every rank's input depends on (rank + i) mod 3,
 * so the ranks' values, and the result, depend on i mod 3 only: computed once per
 * residue (at p = 1024 x 64 KiB the per-element form took 4 of the run's 5 minutes).
 */
function expectedByResidue(op: ReduceOp, ws: number): [number, number, number] {
  return [expected(op, ws, 0), expected(op, ws, 1), expected(op, ws, 2)];
}

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
  const wants = noData ? [0, 0, 0] : expectedByResidue(op, ws);
  for (const bytes of sizes) {
    const count = bytes / bytesPerElement(dtype);
    const t = torch.zeros([count], { dtype });
    // Timing only (--no-data): no input to build and no result to read (copy_ would move
    // nothing, numpy() would read zeros); each would cost the host count x 4 bytes per rank.
    // The input goes straight to copy_ as host values: fromArray would copy them twice more
    // (encode, decode) and copy_ a third time (numpy of the host tensor), 3 x 64 MiB of
    // garbage at p = 1024 x 64 KiB (the values are small integers: exact in every dtype),
    // and the ranks of a thread share their inputs (inputOf).
    if (!noData) await t.copy_({ shape: [count], dtype, data: inputOf(rank, count) });
    const work = await torch.distributed.allReduce(t, { op });
    const out = noData ? new Float32Array(0) : (await t.numpy()).data;
    let wrong = 0;
    for (let i = 0; i < count && !noData; i++) {
      const want = wants[i % 3];
      // avg divides in the dtype: allow its rounding, nothing else.
      if (op === 'avg' ? Math.abs(out[i] - want) > Math.abs(want) * 2 ** -7 : out[i] !== want) wrong++;
    }
    rows.push({ bytes, count, critNs: work.critNs, wrong });
    last = out;
    await torch.distributed.barrier();
  }
  return { rows, out: last };
}

/** Refuse a sweep whose buffers (every size once per rank: memory is not reused within a run) do not fit, with the figures. */
function fitsInMemory(torch: Torch, sizes: number[], ws: number): void {
  const perRank = sizes.reduce((a, b) => a + Math.ceil(b / 64) * 64, 0); // the allocator's 64-byte alignment
  const hbm = torch.spec.timing.memory.hbm.bytes;
  const arena = torch.host.env.plan.dims.arenaBytes;
  // --no-data backs no tensor bytes (arena 0): only the device capacity counts then.
  const backed = !torch.host.env.plan.noData;
  if (perRank > hbm || (backed && perRank * ws > arena)) {
    throw new UsageError(
      `the sizes from --min-bytes to --max-bytes (${sizes.length} of them, each allocated once per rank: memory is not reused within a run) need ${perRank} bytes of device memory per rank and ${perRank * ws} over ${ws} ranks, but a cube's HBM holds ${hbm} and the session arena ${arena} for all ranks; got --max-bytes ${sizes[sizes.length - 1]}`,
    );
  }
}

export default defineBench({
  description: 'nccl-tests style all-reduce table over sizes: time (virtual us), algbw, busbw, #wrong',
  options,
  table: true,
  run,
});

async function run(torch: Torch, ctx: BenchContext<z.output<typeof options>>): Promise<BenchResult[]> {
  const { dtype, op, minBytes, maxBytes, stepFactor: factor } = ctx.options;
  const bpe = bytesPerElement(dtype);
  const ws = ctx.ccl.world_size ?? torch.spec.system.sips.count;
  const sizes: number[] = [];
  for (let b = minBytes; b <= maxBytes; b *= factor) {
    const aligned = Math.max(bpe * ws, Math.floor(b / bpe) * bpe);
    if (sizes[sizes.length - 1] !== aligned) sizes.push(aligned);
  }
  fitsInMemory(torch, sizes, ws);
  const ranks = await torch.multiprocessing.spawn(worker, { args: [sizes, dtype, op, ctx.config.noData ?? false], nprocs: ws });
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

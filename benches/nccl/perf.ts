// Runs on: main. Owns: the nccl-tests style bench of one collective — its
// options (nccl-tests' -b/-e/-f/-o/-d/-r as --min-bytes, --max-bytes,
// --step-factor, --op, --dtype, --root), the sizes of the sweep, the refusal of a
// sweep that cannot fit in device memory, and the table built from the ranks'
// measured groups (./workers.ts) in nccl-tests' layout (./format.ts).
//
// A collective is one entry of COLLECTIVES: how a size becomes the count the
// collective is called with and the size column, and its bus-bandwidth factor
// (nccl-tests doc/PERFORMANCE.md). Adding one: a CollectiveName, a case in
// perfWorker, an entry here and a three-line benches/<name>_perf.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext, BenchResult } from '../../lib/bench/contract.js';
import { defineBench, type Bench, BYTE_SIZE, type OptionsOf, type Zod } from '../../lib/bench/define.js';
import { PROJECT_ROOT } from '../../lib/config/paths.js';
import { REDUCE_OPS } from '../../lib/ccl/reduce-op.js';
import { bytesPerElement } from '../../lib/dtype/index.js';
import { KernbenchError } from '../../lib/errors.js';
import type { Torch } from '../../lib/host/torch.js';
import { DEFAULT_ARENA_BYTES } from '../../lib/config/plan.js';
import { avgBusBw, footerLines, headerLines, kernbenchDType, NCCL_TYPE_NAMES, parameterLine, PERF_DTYPES, rowLine, type Measured, type PerfRow } from './format.js';
import { perfWorker, type CollectiveName, type PerfPlan } from './workers.js';

/** The largest --max-bytes: the session's arena, the host memory that backs every device (lib/sync/plan.ts). */
export const MAX_BYTES_CAP = DEFAULT_ARENA_BYTES;

interface Collective {
  /** nccl-tests' program name, printed in the header. */
  program: string;
  /** The count a rank calls the collective with, for a size of `bytes` (nccl-tests' getCollByteCount, at least one element per rank). */
  count(bytes: number, bpe: number, ws: number): number;
  /** A rank's send and receive buffer sizes in elements, for that count. */
  buffers(count: number, ws: number): { send: number; recv: number };
  /** busbw / algbw. */
  busFactor(ws: number): number;
  /** Takes --op (reductions); the others print redop 'none'. */
  reduces: boolean;
  /** Takes --root (rooted collectives); the others print root -1. */
  rooted: boolean;
}

const perRank = (bytes: number, bpe: number, ws: number): number => Math.max(1, Math.floor(bytes / bpe / ws));

export const COLLECTIVES: Record<CollectiveName, Collective> = {
  // The ring splits the buffer into ws chunks: at least one element each.
  all_reduce: { program: 'all_reduce_perf', count: (b, bpe, ws) => Math.max(ws, Math.floor(b / bpe)), buffers: (n) => ({ send: n, recv: n }), busFactor: (ws) => (2 * (ws - 1)) / ws, reduces: true, rooted: false },
  all_gather: { program: 'all_gather_perf', count: perRank, buffers: (n, ws) => ({ send: n, recv: n * ws }), busFactor: (ws) => (ws - 1) / ws, reduces: false, rooted: false },
  reduce_scatter: { program: 'reduce_scatter_perf', count: perRank, buffers: (n, ws) => ({ send: n * ws, recv: n }), busFactor: (ws) => (ws - 1) / ws, reduces: true, rooted: false },
  broadcast: { program: 'broadcast_perf', count: (b, bpe) => Math.max(1, Math.floor(b / bpe)), buffers: (n) => ({ send: n, recv: n }), busFactor: () => 1, reduces: false, rooted: true },
  // The size is the whole send buffer: ws equal blocks, at least one element each.
  all_to_all: { program: 'alltoall_perf', count: (b, bpe, ws) => Math.max(ws, Math.floor(b / bpe / ws) * ws), buffers: (n) => ({ send: n, recv: n }), busFactor: (ws) => (ws - 1) / ws, reduces: false, rooted: false },
};

function optionsFor(c: Collective) {
  return (z: Zod) => z
    .object({
      minBytes: z.number().int().positive().meta(BYTE_SIZE).default(8).describe('smallest size in bytes (K, M, G suffixes: x1024)'),
      maxBytes: z.number().int().positive().max(MAX_BYTES_CAP, `at most ${MAX_BYTES_CAP} (1 GiB, the session's memory arena)`).meta(BYTE_SIZE).default(1 << 20).describe('largest size in bytes (K, M, G suffixes: x1024)'),
      stepFactor: z.number().gt(1).default(2).describe('multiply the size by this between rows'),
      ...(c.reduces ? { op: z.enum(REDUCE_OPS).default('sum').describe('reduction') } : {}),
      ...(c.rooted ? { root: z.number().int().min(0).default(0).describe('the rank that broadcasts') } : {}),
      dtype: z.enum(PERF_DTYPES).default('float').describe("element type (nccl-tests' names, or kernbench's)"),
    })
    .refine((o) => o.minBytes <= o.maxBytes, { message: '--min-bytes must not exceed --max-bytes' });
}

/** kernbench's version, for the header (read once, on main). */
const VERSION = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The bench of collective `name`. */
export function ncclPerfBench(name: CollectiveName): Bench {
  const c = COLLECTIVES[name];
  const options = optionsFor(c);
  return defineBench({
    description: `nccl-tests' ${c.program} in virtual time: out-of-place and in-place time, algbw, busbw, #wrong per size`,
    options,
    table: true,
    ...(name === 'all_reduce' ? { algorithm: { provides: 'all_reduce' } } : {}),
    run: (torch, ctx) => run(name, torch, ctx as BenchContext<Record<string, unknown>>),
  }) as unknown as Bench;
}

/** Refuse a sweep whose buffers (every size once per rank: memory is not reused within a run) do not fit, with the figures. */
function fitsInMemory(torch: Torch, bytesPerSize: number[], ws: number, maxBytes: number): void {
  const need = bytesPerSize.reduce((a, b) => a + b, 0);
  const hbm = torch.spec.timing.memory.hbm.bytes;
  const arena = torch.host.env.plan.dims.arenaBytes;
  // --no-data backs no tensor bytes (arena 0): only the device capacity counts then.
  const backed = !torch.host.env.plan.noData;
  if (need > hbm || (backed && need * ws > arena)) {
    throw new KernbenchError('ERR_BENCH_TOO_LARGE', 
      `the sizes from --min-bytes to --max-bytes (${bytesPerSize.length} of them, a send and a receive buffer each, allocated once per rank: memory is not reused within a run) need ${need} bytes of device memory per rank and ${need * ws} over ${ws} ranks, but a cube's HBM holds ${hbm} and the session arena ${arena} for all ranks; got --max-bytes ${maxBytes}`,
    );
  }
}

async function run(name: CollectiveName, torch: Torch, ctx: BenchContext<Record<string, unknown>>): Promise<BenchResult[]> {
  const c = COLLECTIVES[name];
  const o = ctx.options as { minBytes: number; maxBytes: number; stepFactor: number; op?: (typeof REDUCE_OPS)[number]; root?: number; dtype: (typeof PERF_DTYPES)[number] };
  const dtype = kernbenchDType(o.dtype);
  const bpe = bytesPerElement(dtype);
  const ws = ctx.ccl.world_size ?? torch.spec.system.sips.count;
  const root = o.root ?? -1;
  if (c.rooted && root >= ws) throw new KernbenchError('ERR_BENCH_OPTION_UNFIT', `${ctx.bench}: --root must be a rank below the world size ${ws}, got ${root}`);
  const counts: number[] = [];
  for (let b = o.minBytes; b <= o.maxBytes; b *= o.stepFactor) {
    const n = c.count(b, bpe, ws);
    if (counts[counts.length - 1] !== n) counts.push(n);
  }
  const align = (elems: number): number => Math.ceil((elems * bpe) / 64) * 64; // the allocator's 64-byte alignment
  fitsInMemory(torch, counts.map((n) => align(c.buffers(n, ws).send) + align(c.buffers(n, ws).recv)), ws, o.maxBytes);
  const noData = ctx.config.noData ?? false;
  const plan: PerfPlan = { collective: name, counts, dtype, op: o.op ?? 'sum', root: Math.max(root, 0), noData };
  const ranks = await torch.multiprocessing.spawn(perfWorker, { args: [plan], nprocs: ws });

  const factor = c.busFactor(ws);
  const rows: PerfRow[] = counts.map((n, i) => {
    const { send, recv } = c.buffers(n, ws);
    const bytes = Math.max(send, recv) * bpe;
    const measure = (group: 'outOfPlace' | 'inPlace'): Measured => {
      const critNs = Math.max(...ranks.map((r) => r.rows[i][group].critNs));
      const algbw = bytes / critNs; // bytes per ns = GB/s
      return { critNs, algbw, busbw: algbw * factor, wrong: noData ? null : ranks.reduce((a, r) => a + r.rows[i][group].wrong, 0) };
    };
    return { bytes, count: n, type: NCCL_TYPE_NAMES[dtype], redop: c.reduces ? plan.op : 'none', root, outOfPlace: measure('outOfPlace'), inPlace: measure('inPlace') };
  });
  // allToAllSingle is the pairwise exchange when the run has peer channels for the world (lib/host/distributed.ts).
  const algorithm = name === 'all_reduce' ? ctx.ccl.algorithm : name === 'all_to_all' && ws > 1 && (ctx.ccl.peer_ranks ?? 0) >= ws ? 'pairwise_all_to_all' : `ring_${name}`;
  const lines = [
    `# Collective test starting: ${c.program}`,
    parameterLine({ ranks: ws, minBytes: o.minBytes, maxBytes: o.maxBytes, stepFactor: o.stepFactor, validation: !noData }),
    '#',
    `# Using kernbench ${VERSION}: ${algorithm} on ${torch.topologyName}, ${ws} ranks; times are virtual`,
    ...headerLines(),
    ...rows.map(rowLine),
    ...footerLines(rows),
  ];
  const wrongGroups = rows.filter((r) => (r.outOfPlace.wrong ?? 0) + (r.inPlace.wrong ?? 0) > 0).length;
  const group = (m: Measured): (number | string)[] => [m.critNs / 1000, m.algbw, m.busbw, m.wrong ?? 'N/A'];
  return [
    {
      bench: ctx.bench,
      algorithm,
      topology: torch.topologyName,
      worldSize: ws,
      nElem: counts[counts.length - 1],
      dtype,
      ok: wrongGroups === 0,
      critNs: Math.max(...rows.flatMap((r) => [r.outOfPlace.critNs, r.inPlace.critNs])),
      lines,
      verbatim: true,
      outputs: ranks.map((r) => r.out),
      table: {
        columns: ['size_bytes', 'count', 'type', 'redop', 'root', 'oop_time_us', 'oop_algbw_GBs', 'oop_busbw_GBs', 'oop_wrong', 'ip_time_us', 'ip_algbw_GBs', 'ip_busbw_GBs', 'ip_wrong'],
        rows: rows.map((r) => [r.bytes, r.count, r.type, r.redop, r.root, ...group(r.outOfPlace), ...group(r.inPlace)]),
      },
      extra: { avgBusbwGBs: avgBusBw(rows), sizes: rows.length },
    },
  ];
}

// Runs on: main (run) and executor threads (worker, one call per rank).
// kernbench's side of simgrid_ring: the work ./ring_allreduce.cpp does and
// nothing more. Every rank all-reduces one f32 buffer of --bytes with the
// configured algorithm, timing only (simgrid_ring passes --no-data), and returns
// its crit_ns. allreduce_perf, which simgrid_ring ran before, times two
// all-reduces and a barrier (nccl-tests' out-of-place and in-place groups,
// decision 0056), twice the work SimGrid's program does.
//
//   kernbench run --bench dist/benches/simgrid/ring_once.js --topology ideal --set system.sips.count=P --bytes B --no-data
import type { BenchContext, BenchResult } from '../../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../../lib/bench/define.js';
import { KernbenchError } from '../../lib/errors.js';
import type { Torch } from '../../lib/host/torch.js';

export const options = (z: Zod) => z.object({
  bytes: z.number().int().positive().default(65536).describe('bytes per rank (one f32 buffer, all-reduced once)'),
});

export default defineBench({
  description: "one ring all-reduce of --bytes per rank, nothing read back: the work of simgrid_ring's SimGrid program",
  options,
  algorithm: { provides: 'all_reduce' },
  run,
});

export async function worker(rank: number, nElem: number, torch: Torch): Promise<number> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([nElem], { dtype: 'f32', name: 'ring_once' });
  return (await torch.distributed.allReduce(t, { op: 'sum' })).critNs;
}

/** A ring of `p` ranks all-reduces `bytes` of f32 in p equal chunks (simgrid_ring checks it before it starts either side). */
export function checkRingBytes(bytes: number, p: number): void {
  if (bytes % (4 * p) !== 0) throw new KernbenchError('ERR_BENCH_OPTION_UNFIT', `--bytes must be a multiple of 4 x P = ${4 * p} (f32 chunks of equal size on every rank), got ${bytes}`);
}

async function run(torch: Torch, ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const ws = torch.spec.system.sips.count;
  const { bytes } = ctx.options;
  checkRingBytes(bytes, ws);
  const critNs = await torch.multiprocessing.spawn(worker, { args: [bytes / 4], nprocs: ws });
  return [{ bench: ctx.bench, algorithm: ctx.ccl.algorithm, topology: torch.topologyName, worldSize: ws, nElem: bytes / 4, dtype: 'f32', ok: true, critNs: Math.max(...critNs), lines: [] }];
}

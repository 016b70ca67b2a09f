// Runs on: main (run) and executor threads (worker, one call per rank).
// The ccl_allreduce bench (seed 002), written as a PyTorch DDP script:
// spawn one rank per SIP -> initProcessGroup -> allReduce -> check.
// CCL rank r's tensor holds r + 1; after a sum every element of every rank
// must equal ws(ws + 1)/2.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { DTYPES, type DType } from '../lib/dtype/index.js';
import type { Torch } from '../lib/host/torch.js';

const options = (z: Zod) => z.object({
  dtype: z.enum(DTYPES).default('f16').describe('element type'),
});

export default defineBench({
  description: 'all-reduce (ccl.yaml algorithm) through spawn -> initProcessGroup -> allReduce, every element checked on every rank',
  options,
  algorithm: { provides: 'all_reduce' },
  run,
});

/** Largest n such that every integer in [0, n] is exact in the dtype (f32's 2^24 is beyond any world size here). */
const EXACT_INTEGERS: Partial<Record<DType, number>> = { f16: 2048, bf16: 256 };

interface RankResult {
  rank: number;
  critNs: number;
  wrong: number;
  mean: number;
  values: Float32Array;
}

export async function worker(rank: number, worldSize: number, nElem: number, dtype: DType, noData: boolean, torch: Torch): Promise<RankResult> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([1, nElem], { dtype, name: 'ccl_in' });
  await t.copy_(torch.fromArray(new Float32Array(nElem).fill(rank + 1), { shape: [1, nElem], dtype }));
  const work = await torch.distributed.allReduce(t, { op: 'sum' });
  const out = await t.numpy();
  return checked(rank, worldSize, noData, work.critNs, out.data);
}

/**
 * Rank `rank`'s result: every element against ws(ws + 1)/2 (--no-data moves
 * nothing: the buffer keeps its zeros, and only the mean is reported).
 */
function checked(rank: number, worldSize: number, noData: boolean, critNs: number, values: Float32Array): RankResult {
  const wrong = noData ? 0 : countOther(values, (worldSize * (worldSize + 1)) / 2);
  return { rank, critNs, wrong, mean: sumOf(values) / values.length, values };
}

/*
 * Each loop is a function of its own that returns right after it. V8 compiles a
 * long loop's frame on the spot (on-stack replacement) while the code after the
 * loop has not run yet; when that code then needed type feedback (the mean, the
 * result's object literal, once inside the async worker too), the loop's compiled
 * code left again on every later rank's call, and the loops ran mostly in the
 * interpreter (`node --trace-deopt`; test/bench-deopts.test.ts).
 */
function countOther(values: Float32Array, expected: number): number {
  let n = 0;
  for (let i = 0; i < values.length; i++) if (values[i] !== expected) n++;
  return n;
}

function sumOf(values: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i];
  return sum;
}

async function run(torch: Torch, ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const ws = ctx.ccl.world_size ?? torch.spec.system.sips.count;
  const nElem = ctx.ccl.n_elem;
  const dtype = ctx.options.dtype;
  const noData = ctx.config.noData ?? false;
  const ranks = await torch.multiprocessing.spawn(worker, { args: [ws, nElem, dtype, noData], nprocs: ws });
  const algo = ctx.ccl.algorithm;
  const expected = (ws * (ws + 1)) / 2;
  const failed = ranks.filter((r) => r.wrong > 0);
  const lines = failed.slice(0, 5).map((r) => `  [FAIL] rank ${r.rank} (ws=${ws}, algo=${algo}): ${r.wrong} of ${nElem} wrong, got mean=${r.mean.toFixed(3)}, expected=${expected.toFixed(3)}`);
  const exactUpTo = EXACT_INTEGERS[dtype];
  if (failed.length > 0 && exactUpTo !== undefined && expected > exactUpTo) {
    lines.push(`  note: ${dtype} holds integers exactly only up to ${exactUpTo}; partial sums here reach ${expected}, and each step rounds to ${dtype}, so exact equality may fail (try --dtype f32)`);
  }
  if (noData) lines.push(`  ${algo} (ws=${ws}): timing only (--no-data), results not checked`);
  else lines.push(failed.length === 0 ? `  ${algo} (ws=${ws}): ${ws} OK` : `  ${algo} (ws=${ws}): ${ws - failed.length} OK / ${failed.length} FAIL`);
  return [
    {
      bench: ctx.bench,
      algorithm: algo,
      topology: torch.topologyName,
      worldSize: ws,
      nElem,
      dtype,
      ok: failed.length === 0,
      critNs: Math.max(...ranks.map((r) => r.critNs)),
      lines,
      outputs: ranks.map((r) => r.values),
    },
  ];
}

// A user bench: spawn one rank per SIP, all-reduce a tensor through the
// ccl.yaml algorithm, check every element on every rank. Run it with
//   npx kernbench run --bench ./bench.ts --ccl ./ccl.yaml --topology ideal
// The spawned function (rankWorker) is a named export of this file: each rank
// imports this module on its own thread to find it.
import { defineBench, z } from 'kernbench/bench';
import type { Torch } from 'kernbench';

/** Reductions whose exact result the bench can check (small integers, exact in f32 in any order). */
const OPS = ['sum', 'max', 'min', 'avg'] as const;
type Op = (typeof OPS)[number];

const options = z.object({
  op: z.enum(OPS).default('sum').describe('the reduction'),
});

/** Rank r's element i: small integers, so every sum is exact in f32 whatever the order. */
const value = (rank: number, i: number): number => (rank + 1) * ((i % 7) + 1);

function expected(op: Op, ws: number, i: number): number {
  const all = Array.from({ length: ws }, (_, r) => value(r, i));
  if (op === 'max') return Math.max(...all);
  if (op === 'min') return Math.min(...all);
  const sum = all.reduce((a, b) => a + b, 0);
  return op === 'avg' ? Math.fround(sum * (1 / ws)) : sum; // the kernel scales once by 1/p
}

export async function rankWorker(rank: number, ws: number, nElem: number, op: Op, torch: Torch) {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([nElem], { dtype: 'f32', name: 'grad' });
  await t.copy_(torch.fromArray(Float32Array.from({ length: nElem }, (_, i) => value(rank, i))));
  const work = await torch.distributed.allReduce(t, { op });
  const out = (await t.numpy()).data;
  let wrong = 0;
  for (let i = 0; i < nElem; i++) if (out[i] !== expected(op, ws, i)) wrong++;
  return { rank, critNs: work.critNs, wrong, values: out };
}

export default defineBench({
  description: 'all-reduce of f32 through the ccl.yaml algorithm, every element checked on every rank',
  options,
  async run(torch, ctx) {
    const ws = ctx.ccl.world_size ?? torch.spec.system.sips.count;
    const nElem = ctx.ccl.n_elem;
    const ranks = await torch.multiprocessing.spawn(rankWorker, { args: [ws, nElem, ctx.options.op], nprocs: ws });
    const failed = ranks.filter((r) => r.wrong > 0);
    const link = torch.spec.timing.links.sip_sip;
    return [
      {
        bench: ctx.bench,
        algorithm: ctx.ccl.algorithm,
        topology: torch.topologyName,
        worldSize: ws,
        nElem,
        dtype: 'f32',
        ok: failed.length === 0,
        critNs: Math.max(...ranks.map((r) => r.critNs)),
        lines: [
          ...failed.map((r) => `  [FAIL] rank ${r.rank}: ${r.wrong} of ${nElem} elements wrong after ${ctx.options.op}`),
          `  ${ctx.ccl.algorithm} (ws=${ws}, ${ctx.options.op}): ${ws - failed.length} OK`,
        ],
        outputs: ranks.map((r) => r.values),
        // What the alpha-beta law needs, as this run's topology has it (test/bidir.test.ts).
        extra: { bytesPerRank: nElem * 4, alphaNs: link.latency_ns, betaBytesPerNs: link.bandwidth_gb_s },
      },
    ];
  },
});

// The partner-based collectives (docs/collectives.md): Rabenseifner's and the
// recursive-doubling all-reduce, Bruck's and the pairwise all-to-all chosen by
// ccl.yaml's `collectives`, and the binomial-tree reduce, gather and scatter
// (torch.distributed.reduce / gather / scatter). Data against a JS reference
// for every dtype and op, power-of-two and other world sizes, on groups and
// overlapping groups; the errors of misuse by code.
import t from 'tap';
import { COLLECTIVES } from '../lib/ccl/define-algorithm.js';
import { REDUCE_OPS, type ReduceOp } from '../lib/ccl/reduce-op.js';
import { DTYPES } from '../lib/dtype/dtypes.js';
import { roundTo, type DType } from '../lib/dtype/index.js';
import { allReduceWorker, CCL_FIXTURES, cclValue, collectiveWorker, everyRank, expectedAllReduce, type CollectiveCase, type RankView } from './fixtures/ccl.js';
import { allReduceSweepWorker, PARTNER_FIXTURES, rootedErrorWorker, rootedSweepWorker, rootedWorker, scatterValue, type RootedCase } from './fixtures/ccl-partners.js';
import { expected, PEERS, range } from './helpers/all-to-all.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES, PARTNER_FIXTURES] });
t.teardown(() => rt.close());

/** The reduction of `op` over the inputs of `members` (cclValue), rounded as the kernels round. */
function reduced(op: ReduceOp, dtype: DType, members: number[], n: number): number[] {
  return expectedAllReduce(op, dtype, n, 1, () => members.map((r) => [r, 0]));
}

/** What each rank of a world of `ranks` (null: not a member of `members`) must return from rootedWorker. */
function rootedExpected(c: RootedCase, ranks: number, members: number[]): (number[] | null)[] {
  const op = c.op ?? 'sum';
  const input = (r: number) => range(c.nElem, (i) => roundTo(c.dtype, cclValue(op, r, 0, i)));
  return range(ranks, (r) => {
    if (!members.includes(r)) return null;
    if (c.kind === 'reduce') return r === c.root ? reduced(op, c.dtype, members, c.nElem) : input(r);
    if (c.kind === 'gather') return r === c.root ? members.flatMap(input) : input(r);
    return range(c.nElem, (i) => scatterValue(c.root, members.indexOf(r), i));
  });
}

const values = (views: (RankView | null)[]) => views.map((v) => (v ? v.values : null));

for (const module of ['recursive_doubling_allreduce', 'rabenseifner_allreduce']) {
  t.test(`${module}: every rank holds the reduction for every op and dtype, at 3, 4 and 6 ranks (peer channels come with the module)`, async (t) => {
    const wrong: string[] = [];
    for (const p of [3, 4, 6]) {
      // 13 elements: chunks of unequal length; 3: empty chunks when p > 3.
      const cases = [...REDUCE_OPS.flatMap((op) => DTYPES.map((dtype) => ({ op, dtype, nElem: 13 }))), { op: 'sum' as const, dtype: 'f32' as const, nElem: 3 }];
      const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: [`ccl.module=${module}`, `ccl.world_size=${p}`] }, (torch) =>
        torch.multiprocessing.spawn(allReduceSweepWorker, { args: [cases], nprocs: p }),
      );
      cases.forEach((c, k) => {
        const want = reduced(c.op, c.dtype, range(p, (i) => i), c.nElem);
        if (r.value.some((rank) => JSON.stringify(rank[k]) !== JSON.stringify(want))) wrong.push(`p=${p} ${c.op} ${c.dtype} n=${c.nElem}`);
      });
    }
    t.same(wrong, [], 'cases with a wrong result');
  });
}

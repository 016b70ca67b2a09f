// The partner-based collectives (docs/algorithms/partners.md): Rabenseifner's and the
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
        if (r.value.some((rank) => JSON.stringify(rank.values[k]) !== JSON.stringify(want))) wrong.push(`p=${p} ${c.op} ${c.dtype} n=${c.nElem}`);
      });
    }
    t.same(wrong, [], 'cases with a wrong result');
  });
}

t.test('reduce, gather and scatter give the JS reference on the world, for every dtype, each op and both list forms, rooted anywhere', async (t) => {
  const p = 6;
  const cases: RootedCase[] = [
    ...REDUCE_OPS.map((op, k): RootedCase => ({ kind: 'reduce', nElem: 7, dtype: DTYPES[k % DTYPES.length], op, root: k % p })),
    ...DTYPES.flatMap((dtype, k): RootedCase[] => [
      { kind: 'gather', nElem: 5, dtype, root: (k + 2) % p, form: 'list' },
      { kind: 'gather', nElem: 5, dtype, root: (k + 3) % p, form: 'tensor' },
      { kind: 'scatter', nElem: 5, dtype, root: (k + 4) % p, form: 'list' },
      { kind: 'scatter', nElem: 5, dtype, root: (k + 1) % p, form: 'tensor', asyncOp: true },
    ]),
  ];
  const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: PEERS(p) }, (torch) => torch.multiprocessing.spawn(rootedSweepWorker, { args: [cases], nprocs: p }));
  const wrong = cases.filter((c, k) => JSON.stringify(r.value.map((rank) => rank[k]?.values ?? null)) !== JSON.stringify(rootedExpected(c, p, range(p, (i) => i))));
  t.same(wrong, [], 'cases with a wrong result');
});

t.test('reduce, gather and scatter on a group and on a group that overlaps another move data among the members by group rank', async (t) => {
  for (const [group, also] of [
    [[4, 1, 3], undefined],
    [[0, 2, 3, 5], [1, 2, 3]],
  ] as const) {
    const members = [...group].sort((a, b) => a - b);
    const base = { group: [...group], also: also ? [...also] : undefined, nElem: 4, dtype: 'f32' as const };
    const cases: RootedCase[] = [
      { ...base, kind: 'reduce', op: 'max', root: members[1] },
      { ...base, kind: 'gather', root: members[2] },
      { ...base, kind: 'scatter', root: members[0] },
    ];
    const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: PEERS(6) }, (torch) => torch.multiprocessing.spawn(rootedSweepWorker, { args: [cases], nprocs: 6 }));
    cases.forEach((c, k) => t.same(r.value.map((rank) => rank[k]?.values ?? null), rootedExpected(c, 6, members), `${c.kind} on [${members.join(', ')}]`));
  }
});

t.test('misuse fails by code: a peer module without peer channels, a root outside the group, a root list of the wrong length', async (t) => {
  const codes = [];
  for (const [c, nprocs, sets] of [
    [{ kind: 'reduce', nElem: 4, dtype: 'f32', root: 0 }, 2, []],
    [{ kind: 'gather', nElem: 4, dtype: 'f32', root: 5 }, 2, PEERS(2)],
    [{ kind: 'gather', nElem: 4, dtype: 'f32', root: 0, listLength: 0 }, 1, PEERS(2)],
    [{ kind: 'scatter', nElem: 4, dtype: 'f32', root: 0, listLength: 2 }, 1, PEERS(2)],
  ] as const) {
    const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: [...sets] }, (torch) => torch.multiprocessing.spawn(rootedErrorWorker, { args: [c], nprocs }));
    codes.push(r.value);
  }
  t.same(codes, [['ERR_NO_PEER_CHANNELS', 'ERR_NO_PEER_CHANNELS'], ['ERR_INVALID_RANK', 'ERR_INVALID_RANK'], ['ERR_ROOT_LIST'], ['ERR_ROOT_LIST']]);
});

t.test("the ccl.yaml collectives' keys are the collectives the modules provide", async (t) => {
  const { CclFileSchema } = await import('../lib/config/ccl-schema.js');
  const { z } = await import('zod');
  const json = z.toJSONSchema(CclFileSchema, { io: 'input' }) as unknown as { properties: { defaults: { properties: { collectives: { properties: Record<string, unknown> } } } } };
  t.same(Object.keys(json.properties.defaults.properties.collectives.properties), [...COLLECTIVES]);
});

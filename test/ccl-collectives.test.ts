// torch.distributed beyond all-reduce (PyTorch semantics: in place, returns a
// Work, asyncOp): broadcast, allGather (all_gather_into_tensor),
// reduceScatter (reduce_scatter_tensor), newGroup subgroups and their
// barrier, and the errors of misuse.
import t from 'tap';
import { SpawnError } from '../lib/errors.js';
import { CCL_FIXTURES, allReduceWorker, cclValue, collectiveWorker, expectedAllReduce, lateBarrierWorker, nonMemberWorker, type CollectiveCase } from './fixtures/ccl.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());

async function run(c: CollectiveCase, nprocs: number, topology = 'ring_1d_6'): Promise<(number[] | null)[]> {
  const r = await rt.session({ topology, threads: 1 }, (torch) => torch.multiprocessing.spawn(collectiveWorker, { args: [c], nprocs }));
  return r.value.map((v) => (v ? v.values : null));
}

const range = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

t.test('broadcast from rank 0 and from rank 3 leaves the source tensor on each of 5 ranks', async (t) => {
  const n = 53;
  const from0 = await run({ kind: 'broadcast', nElem: n, dtype: 'f16', src: 0 }, 5);
  const from3 = await run({ kind: 'broadcast', nElem: n, dtype: 'f16', src: 3 }, 5);
  t.same(from0, range(5, () => range(n, (i) => cclValue('sum', 0, 0, i))));
  t.same(from3, range(5, () => range(n, (i) => cclValue('sum', 3, 0, i))));
});

t.test('allGather puts rank r input at [r n, (r + 1) n) of every rank output', async (t) => {
  const n = 10;
  const got = await run({ kind: 'allGather', nElem: n, dtype: 'f32' }, 5);
  const expected = range(5 * n, (j) => cclValue('sum', Math.floor(j / n), 0, j % n));
  t.same(got, range(5, () => expected));
});

t.test('reduceScatter leaves block r of the reduction on rank r, for sum, max and avg', async (t) => {
  const n = 7, p = 6;
  const seen: Record<string, boolean> = {};
  for (const op of ['sum', 'max', 'avg'] as const) {
    const got = await run({ kind: 'reduceScatter', nElem: n, dtype: 'f16', op }, p);
    const full = expectedAllReduce(op, 'f16', p * n, 1, () => range(p, (q): [number, number] => [q, 0]));
    seen[op] = JSON.stringify(got) === JSON.stringify(range(p, (r) => full.slice(r * n, (r + 1) * n)));
  }
  t.same(seen, { sum: true, max: true, avg: true });
});

t.test('with asyncOp each collective returns a Work that completes with the same result', async (t) => {
  const cases: CollectiveCase[] = [
    { kind: 'broadcast', nElem: 9, dtype: 'f32', src: 1 },
    { kind: 'allGather', nElem: 9, dtype: 'f32' },
    { kind: 'reduceScatter', nElem: 9, dtype: 'f32', op: 'min' },
  ];
  const seen = [];
  for (const c of cases) seen.push({ kind: c.kind, same: JSON.stringify(await run({ ...c, asyncOp: true }, 3)) === JSON.stringify(await run(c, 3)) });
  t.same(
    seen,
    cases.map((c) => ({ kind: c.kind, same: true })),
  );
});

t.test('newGroup([1, 3, 4]): an all-reduce on the subgroup sums over its members only; others take no part', async (t) => {
  const r = await rt.session({ topology: 'ring_1d_6', threads: 1 }, (torch) =>
    torch.multiprocessing.spawn(allReduceWorker, { args: [{ nElem: 31, dtype: 'f16', op: 'sum', group: [4, 1, 3] }], nprocs: 6 }),
  );
  const expected = expectedAllReduce('sum', 'f16', 31, 1, () => [
    [1, 0],
    [3, 0],
    [4, 0],
  ]);
  t.same(
    r.value.map((v) => (v ? v.values : null)),
    [null, expected, null, expected, expected, null],
  );
});

t.test('the tree all-reduce runs on a subgroup too (a tree of its members)', async (t) => {
  const r = await rt.session({ topology: 'ring_1d_6', algorithm: 'tree_allreduce', threads: 1 }, (torch) =>
    torch.multiprocessing.spawn(allReduceWorker, { args: [{ nElem: 12, dtype: 'f32', op: 'prod', group: [0, 2, 3, 5] }], nprocs: 6 }),
  );
  const expected = expectedAllReduce('prod', 'f32', 12, 1, () => [0, 2, 3, 5].map((q): [number, number] => [q, 0]));
  t.same(
    r.value.map((v) => (v ? v.values : null)),
    [expected, null, expected, expected, null, expected],
  );
});

t.test('broadcast, allGather and reduceScatter on a subgroup use group ranks for blocks and a global rank for src', async (t) => {
  const group = [1, 2, 5];
  const n = 4;
  const bc = await run({ kind: 'broadcast', nElem: n, dtype: 'f32', src: 5, group }, 6);
  const ag = await run({ kind: 'allGather', nElem: n, dtype: 'f32', group }, 6);
  const rs = await run({ kind: 'reduceScatter', nElem: n, dtype: 'f32', op: 'sum', group }, 6);
  const member = (v: number[]) => range(6, (r) => (group.includes(r) ? v : null));
  t.same(bc, member(range(n, (i) => cclValue('sum', 5, 0, i))), 'broadcast');
  t.same(ag, member(range(3 * n, (j) => cclValue('sum', group[Math.floor(j / n)], 0, j % n))), 'allGather');
  const full = expectedAllReduce('sum', 'f32', 3 * n, 1, () => group.map((q): [number, number] => [q, 0]));
  t.same(
    rs,
    range(6, (r) => (group.includes(r) ? full.slice(group.indexOf(r) * n, (group.indexOf(r) + 1) * n) : null)),
    'reduceScatter',
  );
});

t.test('a subgroup barrier holds every member until the last one arrives', async (t) => {
  const r = await rt.session({ topology: 'ring_1d_6', threads: 1 }, (torch) => torch.multiprocessing.spawn(lateBarrierWorker, { args: [[0, 2, 4], 4, 50_000], nprocs: 6 }));
  const clocks = r.value as (number | null)[];
  t.same(
    clocks.map((c) => (c === null ? null : c >= 50_000)),
    [true, null, true, null, true, null],
    `member clocks after the barrier: ${clocks.join(', ')} ns`,
  );
});

t.test('a rank that is not a member of the group cannot run its collective', async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 1 }, async (torch) => {
    const e = await torch.multiprocessing.spawn(nonMemberWorker, { nprocs: 2 }).catch((x: unknown) => x);
    t.ok(e instanceof SpawnError);
    t.same([...(e as SpawnError).errors.entries()].map(([rank, err]) => [rank, (err as { code?: string }).code]), [[1, 'ERR_NOT_GROUP_MEMBER']]);
  });
});

t.test('misuse is refused with a stable code: bad group ranks, foreign src, mismatched sizes and dtypes', async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 1 }, async (torch) => {
    const dist = torch.distributed;
    await dist.initProcessGroup({ backend: 'ahbm' });
    const x = torch.zeros([8]);
    t.throws(() => dist.newGroup([0, 0]), { code: 'ERR_INVALID_RANK' }, 'duplicate ranks');
    t.throws(() => dist.newGroup([1]), { code: 'ERR_INVALID_RANK' }, 'a rank beyond the world');
    await t.rejects(dist.broadcast(x, { src: 1 }), { code: 'ERR_INVALID_RANK' }, 'src outside the group');
    await t.rejects(dist.allGather(torch.zeros([9]), x), { code: 'ERR_SHAPE_MISMATCH' }, 'allGather out of the wrong size');
    await t.rejects(dist.reduceScatter(torch.zeros([8]), torch.zeros([8], { dtype: 'f16' })), { code: 'ERR_DTYPE_MISMATCH' }, 'reduceScatter across dtypes');
  });
});

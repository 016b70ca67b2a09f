// torch.distributed.allToAllSingle with even splits (the ring store-and-forward
// all-to-all, lib/ccl/collectives/all_to_all.ts): rank r's output block s is
// rank s's input block r, for every dtype, on the world and on a subgroup; its
// alpha-beta law on the ideal 6-ring (docs/algorithms/all_to_all.md); one
// crit_ns under --threads 1, 2 and jitter; uneven splits refused by code; and
// Work.endNs, the time this rank's part ended.
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { DTYPES } from '../lib/dtype/dtypes.js';
import { CCL_FIXTURES, a2aEndWorker, a2aSplitWorker, a2aUnevenWorker, a2aValue, cclValue, collectiveWorker, everyRank, peerShiftWorker, type CollectiveCase } from './fixtures/ccl.js';
import { TestRuntime } from './helpers/run.js';
import { expected, PEERS, range } from './helpers/all-to-all.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());


t.test('allToAllSingle: block s of rank r output is rank s input block r, for every dtype', async (t) => {
  const p = 5, n = 7;
  const seen: Record<string, boolean> = {};
  for (const dtype of DTYPES) {
    const r = await rt.session({ topology: 'ring_1d_6', threads: 1 }, (torch) => torch.multiprocessing.spawn(collectiveWorker, { args: [{ kind: 'allToAllSingle', nElem: n, dtype } satisfies CollectiveCase], nprocs: p }));
    const members = range(p, (i) => i);
    seen[dtype] = JSON.stringify(everyRank(r.value).map((v) => v.values)) === JSON.stringify(range(p, (q) => expected(members, q, n)));
  }
  t.same(seen, Object.fromEntries(DTYPES.map((d) => [d, true])));
});

t.test('allToAllSingle on the subgroup [1, 3, 4] moves blocks among its members by group rank', async (t) => {
  const n = 4;
  const r = await rt.session({ topology: 'ring_1d_6', threads: 1 }, (torch) =>
    torch.multiprocessing.spawn(collectiveWorker, { args: [{ kind: 'allToAllSingle', nElem: n, dtype: 'f32', group: [4, 1, 3] } satisfies CollectiveCase], nprocs: 6 }),
  );
  const members = [1, 3, 4];
  t.same(
    r.value.map((v) => (v ? v.values : null)),
    [null, expected(members, 0, n), null, expected(members, 1, n), expected(members, 2, n), null],
  );
});

t.test('on the ideal 6-ring allToAllSingle takes (p-1) alpha + p(p-1)/2 b/beta (b = block bytes) to 1e-6', async (t) => {
  const ideal = loadTopology(topologyPath('ideal_ring_1d_6'));
  const alpha = ideal.timing.links.sip_sip.latency_ns;
  const beta = ideal.timing.links.sip_sip.bandwidth_gb_s;
  const p = 6;
  for (const n of [96, 6144]) {
    const r = await rt.session({ topology: 'ideal_ring_1d_6', threads: 1 }, (torch) => torch.multiprocessing.spawn(collectiveWorker, { args: [{ kind: 'allToAllSingle', nElem: n, dtype: 'f32' } satisfies CollectiveCase], nprocs: p }));
    const got = Math.max(...everyRank(r.value).map((v) => v.critNs));
    const law = (p - 1) * alpha + ((p * (p - 1)) / 2) * ((4 * n) / beta);
    t.ok(Math.abs(got - law) / law <= 1e-6, `n = ${n}: crit ${got} ns vs law ${law} ns`);
  }
});

t.test('the ring allToAllSingle has one crit_ns under --threads 1, 2 and jitter', async (t) => {
  const crit: number[][] = [];
  for (const [threads, jitterSeed] of [[1, null], [2, null], [2, 11]] as const) {
    const r = await rt.session({ topology: 'ring_1d_6', threads, jitterSeed }, (torch) => torch.multiprocessing.spawn(collectiveWorker, { args: [{ kind: 'allToAllSingle', nElem: 40, dtype: 'bf16' } satisfies CollectiveCase], nprocs: 6 }));
    crit.push(everyRank(r.value).map((v) => v.critNs));
  }
  t.same(crit[1], crit[0]);
  t.same(crit[2], crit[0]);
});

t.test('without peer channels uneven splits are ERR_UNEVEN_SPLIT, splits that do not add up ERR_INVALID_SPLIT_SIZES; even ones given explicitly run', async (t) => {
  const codes = [];
  for (const splits of [[2, 4], [1, 2], [3, 3]]) {
    const r = await rt.session({ topology: 'ring_1d_6', threads: 1 }, (torch) => torch.multiprocessing.spawn(a2aSplitWorker, { args: [splits], nprocs: 2 }));
    codes.push(r.value);
  }
  t.same(codes, [
    ['ERR_UNEVEN_SPLIT', 'ERR_UNEVEN_SPLIT'],
    ['ERR_INVALID_SPLIT_SIZES', 'ERR_INVALID_SPLIT_SIZES'],
    ['none', 'none'],
  ]);
});

t.test('Work.endNs says when the launch ended: the second of two back-to-back calls ends after the first, by at least its crit', async (t) => {
  const r = await rt.session({ topology: 'ring_1d_6', threads: 1 }, (torch) => torch.multiprocessing.spawn(a2aEndWorker, { args: [], nprocs: 3 }));
  for (const [aEnd, aCrit, bEnd, bCrit] of r.value) {
    t.ok(aEnd >= aCrit && aCrit > 0, `first ends at ${aEnd} ns after a crit of ${aCrit} ns`);
    t.ok(bEnd - aEnd >= bCrit - 1e-9, `second ends at ${bEnd} ns, ${bEnd - aEnd} ns after the first, crit ${bCrit} ns`);
  }
});


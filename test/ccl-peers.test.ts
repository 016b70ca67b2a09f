// Peer channels (docs/decisions/0060-peer-channels.md): tl.peer in a kernel of
// the fixtures, and the pairwise-exchange allToAllSingle over them, with even
// and uneven splits, for every dtype, on the world and on subgroups; one
// crit_ns under --threads 1, 2, rank and jitter; the errors of misuse by code.
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { DTYPES } from '../lib/dtype/dtypes.js';
import { CCL_FIXTURES, a2aEndWorker, a2aSplitWorker, a2aUnevenWorker, a2aValue, cclValue, collectiveWorker, everyRank, peerShiftWorker, type CollectiveCase } from './fixtures/ccl.js';
import { TestRuntime } from './helpers/run.js';
import { expected, PEERS, range } from './helpers/all-to-all.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());


/** sizes[i][j]: elements from rank i to rank j, some 0. */
const SIZES = (p: number): number[][] => range(p, (i) => range(p, (j) => (i * 5 + j * 3 + 1) % 7));

/** What member `me` of `members` must hold after the uneven all-to-all. */
function unevenExpected(members: number[], sizes: number[][], me: number): number[] {
  return members.flatMap((src, s) => range(sizes[s][me], (i) => a2aValue(src, members[me], i)));
}

t.test('with peer channels allToAllSingle takes uneven splits (zeros included), for every dtype, on the world and a subgroup', async (t) => {
  const p = 5;
  const sizes = SIZES(p);
  const seen: Record<string, boolean> = {};
  for (const dtype of DTYPES) {
    const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: PEERS(p) }, (torch) => torch.multiprocessing.spawn(a2aUnevenWorker, { args: [sizes, dtype, undefined], nprocs: p }));
    const members = range(p, (i) => i);
    seen[dtype] = JSON.stringify(everyRank(r.value).map((v) => v.values)) === JSON.stringify(range(p, (me) => unevenExpected(members, sizes, me)));
  }
  t.same(seen, Object.fromEntries(DTYPES.map((d) => [d, true])));
  const members = [1, 2, 4];
  const sub = SIZES(3);
  const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: PEERS(6) }, (torch) => torch.multiprocessing.spawn(a2aUnevenWorker, { args: [sub, 'f32', members], nprocs: 6 }));
  t.same(
    r.value.map((v) => (v ? v.values : null)),
    [null, unevenExpected(members, sub, 0), unevenExpected(members, sub, 1), null, unevenExpected(members, sub, 2), null],
  );
});

t.test('with peer channels allToAllSingle is the pairwise exchange: the same blocks for every dtype, on the world and a subgroup', async (t) => {
  const p = 5, n = 6;
  const seen: Record<string, boolean> = {};
  for (const dtype of DTYPES) {
    const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: PEERS(p) }, (torch) => torch.multiprocessing.spawn(collectiveWorker, { args: [{ kind: 'allToAllSingle', nElem: n, dtype } satisfies CollectiveCase], nprocs: p }));
    seen[dtype] = JSON.stringify(everyRank(r.value).map((v) => v.values)) === JSON.stringify(range(p, (q) => expected(range(p, (i) => i), q, n)));
  }
  t.same(seen, Object.fromEntries(DTYPES.map((d) => [d, true])));
  const sub = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: PEERS(6) }, (torch) =>
    torch.multiprocessing.spawn(collectiveWorker, { args: [{ kind: 'allToAllSingle', nElem: 3, dtype: 'f16', group: [5, 0, 2, 3] } satisfies CollectiveCase], nprocs: 6 }),
  );
  const members = [0, 2, 3, 5];
  t.same(
    sub.value.map((v) => (v ? v.values : null)),
    [expected(members, 0, 3), null, expected(members, 1, 3), expected(members, 2, 3), null, expected(members, 3, 3)],
  );
});

t.test('the pairwise exchange has one crit_ns under --threads 1, 2, rank and jitter, and beats the ring on the fully connected kind', async (t) => {
  const crit: number[][] = [];
  const c: CollectiveCase = { kind: 'allToAllSingle', nElem: 40, dtype: 'bf16' };
  for (const [threads, jitterSeed] of [[1, null], [2, null], ['rank', null], [2, 7]] as const) {
    const r = await rt.session({ topology: 'fully_connected_6', threads, jitterSeed, sets: PEERS(6) }, (torch) => torch.multiprocessing.spawn(collectiveWorker, { args: [c], nprocs: 6 }));
    crit.push(everyRank(r.value).map((v) => v.critNs));
  }
  for (let i = 1; i < crit.length; i++) t.same(crit[i], crit[0]);
  const ring = await rt.session({ topology: 'fully_connected_6', threads: 1 }, (torch) => torch.multiprocessing.spawn(collectiveWorker, { args: [c], nprocs: 6 }));
  const ringCrit = Math.max(...everyRank(ring.value).map((v) => v.critNs));
  t.ok(Math.max(...crit[0]) < ringCrit, `pairwise ${Math.max(...crit[0])} ns < ring ${ringCrit} ns`);
});

t.test('tl.peer: a kernel sends to and receives from a rank two hops away; without ccl.peer_ranks, or addressing itself, it fails by code', async (t) => {
  const p = 6;
  const shifted = await rt.session({ topology: 'ring_1d_6', threads: 2, sets: PEERS(p) }, (torch) => torch.multiprocessing.spawn(peerShiftWorker, { args: [2], nprocs: p }));
  t.same(shifted.value, range(p, (r) => range(5, (i) => 10 * ((r - 2 + p) % p) + i)));
  const off = await rt.session({ topology: 'ring_1d_6', threads: 1 }, (torch) => torch.multiprocessing.spawn(peerShiftWorker, { args: [2], nprocs: p }));
  const self = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: PEERS(p) }, (torch) => torch.multiprocessing.spawn(peerShiftWorker, { args: [0], nprocs: p }));
  t.same(off.value, range(p, () => 'ERR_NO_PEER_CHANNELS'));
  t.same(self.value, range(p, () => 'ERR_INVALID_PEER'));
});

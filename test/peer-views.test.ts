// Runs on: main thread (tap). Covers decision 0269: a thread does not keep a view of
// every peer ring it used (an all-to-all uses one for every ordered pair of ranks, p^2
// in a run), and a peer ring's sending end, dropped once its channel is idle, reopens at
// the ring's tail: a second round over the same rings delivers every message, under
// every thread layout and with jitter. And decision 0271: an idle channel points its peer
// view and a spare sending end at the next peer's ring, forgetting the old one's tail,
// head and slots.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';
import { PEERS, range } from './helpers/all-to-all.js';

const FIXTURE = new URL('./fixtures/peer-views.js', import.meta.url).href;
const rt = new TestRuntime({ modules: [FIXTURE] });
t.teardown(() => rt.close());

const P = 8;
const ROUNDS = 3;
const X = (rank: number): number => 10 * (rank + 1);

t.test('peer rings: no view kept by the thread, one sending end a channel, and every round delivered', async (t) => {
  const { peerViewsWorker } = await import('./fixtures/peer-views.js');
  const total = range(P, X).reduce((a, b) => a + b, 0);
  for (const [threads, jitter] of [[1, undefined], [2, undefined], ['rank', undefined], [2, 7]] as const) {
    const s = await rt.session({ topology: 'ideal', threads, jitterSeed: jitter ?? null, sets: [`system.sips.count=${P}`, ...PEERS(P)] }, (torch) => torch.multiprocessing.spawn(peerViewsWorker, { args: [ROUNDS], nprocs: P }));
    const how = `--threads ${threads}${jitter === undefined ? '' : `, jitter seed ${jitter}`}`;
    t.same(
      (s.value as number[][]).map((v) => v[1]),
      range(P, (r) => ROUNDS * (total - X(r))),
      `${how}: each rank got every peer's value in every round`,
    );
    t.same(
      (s.value as number[][]).map((v) => v[2]),
      range(P, () => 0),
      `${how}: no peer ring's view in the thread's table`,
    );
    // Peers at distances 1 to 7 are on all four directions' channels: each keeps its last one, once idle.
    t.same(
      (s.value as number[][]).map((v) => v[3]),
      range(P, () => 4),
      `${how}: one peer ring a channel`,
    );
  }
});

t.test('peer rings in turn, each sent more messages than it has slots: every value where it belongs, under every layout', async (t) => {
  const { peerBurstsWorker } = await import('./fixtures/peer-views.js');
  // More than the ideal machine's 8 slots a ring: the last sends of a burst wait for credits.
  const M = 12;
  // Rank r gets, from the peer d ranks west (s = r - d), the values 1000 s + 10 d + i.
  const want = range(P, (r) => range((P - 1) * M, (k) => 1000 * ((r - (Math.floor(k / M) + 1) + P) % P) + 10 * (Math.floor(k / M) + 1) + (k % M)));
  for (const [threads, jitter] of [[1, undefined], [2, undefined], ['rank', undefined], [1, 3]] as const) {
    const s = await rt.session({ topology: 'ideal', threads, jitterSeed: jitter ?? null, sets: [`system.sips.count=${P}`, ...PEERS(P)] }, (torch) => torch.multiprocessing.spawn(peerBurstsWorker, { args: [M], nprocs: P }));
    t.same(s.value, want, `--threads ${threads}${jitter === undefined ? '' : `, jitter seed ${jitter}`}: every burst delivered in order`);
  }
});

t.test('a peer ring view pointed at another ring forgets the first: its tail, its head, its slots', async (t) => {
  const { loadCcl, loadTopology } = await import('../lib/config/load.js');
  const { DEFAULT_CCL_FILE, topologyPath } = await import('../lib/config/paths.js');
  const { buildPlan } = await import('../lib/config/plan.js');
  const { SharedState } = await import('../lib/shm/shared-state.js');
  const { peerRingView } = await import('../lib/ipcq/ring.js');
  const topology = loadTopology(topologyPath('ideal'), [`system.sips.count=${P}`]);
  const ccl = { ...loadCcl(DEFAULT_CCL_FILE), module_url: '', peer_ranks: P };
  const plan = buildPlan({ topologyName: 'ideal', topology, ccl, threads: 1, jitterSeed: null, noData: false });
  const sh = SharedState.create(plan.dims);
  const L = sh.layout;
  const set = ccl.channel_sets; // the first peer set
  const x = L.ringOf(0, 0, set);
  const y = L.ringOf(1, 0, set + 1);
  const bytes = (v: number): Uint8Array => new Uint8Array(8).fill(v);
  // Ring x: ten messages sent and freed, so the view has seen its tail and head at 10 and made its slots' views.
  const v = peerRingView(sh, x);
  for (let k = 0; k < 10; k++) {
    v.write(k, bytes(k + 1), 0, 8, { arrivalPs: k, sender: 0, receiver: 3 });
    v.free(k, k);
  }
  t.ok(v.tailAtLeast(10) && v.headAtLeast(10), 'ring x: tail and head at 10, as seen');
  const xSlot0 = Uint8Array.from(peerRingView(sh, x).payload(8, 8));
  v.retarget(y);
  t.equal(v.ring, y, 'the view now names ring y');
  t.notOk(v.tailAtLeast(1), "ring y's tail is 0: nothing published there");
  t.notOk(v.headAtLeast(1), "ring y's head is 0: no credit back there");
  v.write(0, bytes(77), 0, 8, { arrivalPs: 5, sender: 1, receiver: 6 });
  const fresh = peerRingView(sh, y);
  t.ok(fresh.tailAtLeast(1), "the message lands on ring y's tail");
  t.equal(fresh.checkedBytes(0, 1, 6), 8, "in ring y's slot 0, addressed PE 1 -> PE 6");
  t.same(Array.from(fresh.payload(0, 8)), Array.from(bytes(77)), "with its payload in ring y's slot");
  t.same(Array.from(peerRingView(sh, x).payload(8, 8)), Array.from(xSlot0), "ring x's slot is as it was");
});

// Runs on: main thread (tap). Covers decision 0269: a thread does not keep a view of
// every peer ring it used (an all-to-all uses one for every ordered pair of ranks, p^2
// in a run), and a peer ring's sending end, dropped once its channel is idle, reopens at
// the ring's tail: a second round over the same rings delivers every message, under
// every thread layout and with jitter.
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

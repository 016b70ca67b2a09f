// Runs on: main thread (tap), sessions on real threads. Covers decision 0270: on a
// switch, a ring's pieces are held for their links on the send (the ranks' floors are
// at the step's start), and pieces to peers whose links other channels claim go to the
// link arbiter, both on the channel's fast path, without the queued path's promise
// chain; a send issued while one waits queues behind it. Each rank sends several tiles
// back to back: the values arrive in order and the times are the link arbiter's, under
// every thread layout.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';
import { PEERS } from './helpers/all-to-all.js';

const FIXTURE = new URL('./fixtures/held-sends.js', import.meta.url).href;
const rt = new TestRuntime({ modules: [FIXTURE] });
t.teardown(() => rt.close());

const P = 4;
const N = 3;
const SWITCH = ['system.sips.count=4', 'timing.link_sharing=max_min'];
const ARBITRATED = [...SWITCH, 'timing.link_fast_path=false'];
/** The peer test's ranks: the whole switch, seven peers a rank on four directions' channels, so sends queue behind one another. */
const PEER_P = 8;
const PEER_SWITCH = [`system.sips.count=${PEER_P}`, 'timing.link_sharing=max_min'];
const PEER_ARBITRATED = [...PEER_SWITCH, 'timing.link_fast_path=false'];

t.test('sends held on a switch, back to back: every value in order, the arbitrated times', async (t) => {
  const { heldSendsWorker } = await import('./fixtures/held-sends.js');
  const go = async (threads: 1 | 2 | 'rank', sets: string[]) => {
    const run = await rt.session({ topology: 'single_switch_8', threads, sets }, (torch) => torch.multiprocessing.spawn(heldSendsWorker, { args: [N], nprocs: P }));
    return { views: run.value as { values: number[]; critNs: number }[], pieces: run.report.linkPieces, messages: run.report.messages };
  };
  const ref = await go(1, ARBITRATED);
  t.equal(ref.pieces.arbitrated, ref.messages, `arbitrated from the start: every piece through the arbiter (${ref.messages})`);
  const sent = (r: number): number[] => Array.from({ length: N }, (_, i) => 100 * r + i);
  t.same(
    ref.views.map((v) => v.values),
    Array.from({ length: P }, (_, r) => [...sent(r), ...sent((r + P - 1) % P)]),
    'arbitrated: each rank got its west neighbour’s tiles, in order',
  );
  for (const threads of [1, 2, 'rank'] as const) {
    const r = await go(threads, SWITCH);
    t.same(r.views, ref.views, `--threads ${threads}: the arbitrated values and crit_ns (${JSON.stringify(ref.views.map((v) => v.critNs))} ns)`);
    t.ok(r.pieces.released > 0, `--threads ${threads}: pieces held, then released alone (${r.pieces.released} of ${r.messages}; ${r.pieces.alone} alone at once, ${r.pieces.arbitrated} arbitrated)`);
  }
});

t.test('sends to every peer on a switch, back to back: each through the arbiter from the send, every value in order, the arbitrated times', async (t) => {
  const { peerSendsWorker } = await import('./fixtures/held-sends.js');
  const go = async (threads: 1 | 2 | 'rank', sets: string[]) => {
    const run = await rt.session({ topology: 'single_switch_8', threads, sets: [...sets, ...PEERS(PEER_P)] }, (torch) => torch.multiprocessing.spawn(peerSendsWorker, { args: [PEER_P], nprocs: PEER_P }));
    return { views: run.value as { values: number[]; critNs: number }[], pieces: run.report.linkPieces, messages: run.report.messages };
  };
  const ref = await go(1, PEER_ARBITRATED);
  t.equal(ref.pieces.arbitrated, ref.messages, `arbitrated from the start: every piece through the arbiter (${ref.messages})`);
  t.same(
    ref.views.map((v) => v.values),
    Array.from({ length: PEER_P }, (_, r) => [...Array.from({ length: PEER_P - 1 }, (_, j) => 100 * r + j), ...Array.from({ length: PEER_P - 1 }, (_, j) => 100 * ((r - j - 1 + PEER_P) % PEER_P) + j)]),
    'arbitrated: each rank got every peer’s value for it',
  );
  for (const threads of [1, 2, 'rank'] as const) {
    const r = await go(threads, PEER_SWITCH);
    t.same(r.views, ref.views, `--threads ${threads}: the arbitrated values and crit_ns (${JSON.stringify(ref.views.map((v) => v.critNs))} ns)`);
  }
});

// Runs on: main thread (tap), and a Worker (./fixtures/abort-racer.ts). Covers:
// abortSession (lib/sync/wake.ts) called by two threads at once: the loser of the
// claim returns only once the winner's abort is done, its report written and ABORT
// bumped (decision 0254).
//
// The loser used to return at once. An executor whose kernel's orphan flow faulted
// lost the claim to another thread's abort, failed its own ranks with AbortErrors,
// and the join could settle before the winner had written its report: the run ended
// with ERR_INTERNAL "spawn failed but no rank reported a root cause" (once in CI, in
// test/kernel-concurrency.test.ts's orphanFlow case under --threads 2).
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { ABORT_KIND, HEADER } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { abortSession } from '../lib/sync/wake.js';
import { DONE, EARLY, GO, lostEarly, READY, report } from './fixtures/abort-racer.js';
import { awaitWord } from './helpers/handshake.js';

/** Cycles run: each one abort claimed by both threads. */
const CYCLES = 5_000;

t.test('two threads abort at once: the loser returns only once the winner has written its report and bumped ABORT', async (t) => {
  const sh = SharedState.create({ executors: 1, pes: 2, hosts: 1, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 1024 });
  const L = sh.layout;
  const ctl = sh.ctl;
  const hs = new Int32Array(new SharedArrayBuffer(16));
  const worker = new Worker(new URL('./fixtures/abort-racer.js', import.meta.url), { workerData: { dims: L.dims, buffers: sh.buffers, handshake: hs.buffer } });
  const stopped = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const mine = report('the test');
  const slot = new DataView(sh.buffers.cmd);
  // The worker starts with this thread's event loop free.
  while (Atomics.load(hs, READY) === 0) await new Promise((r) => setTimeout(r, 1));
  let early = 0;
  let won = 0;
  for (let k = 1; k <= CYCLES; k++) {
    // A fresh session's words: no abort claimed, none done, no report.
    Atomics.store(ctl, HEADER.ABORT_KIND, ABORT_KIND.NONE);
    Atomics.store(ctl, HEADER.ABORT, 0);
    slot.setUint32(L.errorOffset(-1), 0, true);
    awaitWord(hs, READY, k);
    Atomics.store(hs, GO, k);
    Atomics.notify(hs, GO);
    // Now one side claims first, now the other: a spin of a varying length before this side's claim.
    for (let spin = (k * 7919) % 3000; spin > 0; spin--) Atomics.load(hs, GO);
    if (abortSession(sh, ABORT_KIND.FAULT, mine)) won++;
    else if (lostEarly(sh)) early++;
    awaitWord(hs, DONE, k);
  }
  Atomics.store(hs, GO, -1);
  Atomics.notify(hs, GO);
  await stopped;
  await worker.terminate();
  const workerEarly = Atomics.load(hs, EARLY);
  t.ok(won > 0 && won < CYCLES, `each side won some claims (this thread ${won} of ${CYCLES})`);
  t.same({ thisThread: early, worker: workerEarly }, { thisThread: 0, worker: 0 }, `losses that returned before the winner's abort was done (of ${CYCLES} cycles)`);
});

t.test('a claim whose winner never finishes (its thread died between claim and report) does not hold the loser for ever: it ends the abort itself', async (t) => {
  const sh = SharedState.create({ executors: 1, pes: 2, hosts: 1, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 1024 });
  // The dead winner's claim: ABORT_KIND taken, no report, ABORT never bumped.
  Atomics.store(sh.ctl, HEADER.ABORT_KIND, ABORT_KIND.DEADLOCK);
  t.equal(abortSession(sh, ABORT_KIND.FAULT, report('the loser'), 50), false, 'the claim is lost');
  t.equal(Atomics.load(sh.ctl, HEADER.ABORT), 1, 'the abort is done: every waiter now rejects');
  t.equal(Atomics.load(sh.ctl, HEADER.ABORT_KIND), ABORT_KIND.DEADLOCK, 'as the winner claimed it');
  t.equal(sh.readErrorSlot(-1), undefined, 'without a report: the loser does not write one over a claim it lost');
});

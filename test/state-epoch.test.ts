// Runs on: main thread (tap). Covers: the sum of the threads' state-change counts that
// every snapshot brackets its reads with (lib/shm/shared-state.ts stateEpoch), read
// only for the threads the epochs' summary names (decision 0256): a thread's first
// change through the Scheduler names it, every later change counts, and the sum equals
// every thread's word summed.
import t from 'tap';
import { ACTOR_STATE, EXEC } from '../lib/shm/layout.js';
import { SharedState, stateEpoch } from '../lib/shm/shared-state.js';
import { Scheduler } from '../lib/sync/scheduler.js';

/** Every thread's word, as the sum read them before the summary. */
function fullSum(sh: SharedState): number {
  let sum = 0;
  for (let e = 0; e <= sh.layout.dims.executors; e++) sum += Atomics.load(sh.ctl, sh.layout.exec(e, EXEC.STATE_EPOCH));
  return sum;
}

t.test('threads are summed once their first state change names them, across a summary of two words', async (t) => {
  // 40 executors and main: 41 threads, a summary of two words.
  const sh = SharedState.create({ executors: 40, pes: 40, hosts: 2, nSlots: 2, slotSize: 64, cubes: 10, arenaBytes: 1024, links: 0 });
  const L = sh.layout;
  t.equal(L.epochSummaryWords, 2);
  t.equal(stateEpoch(sh), 0, 'no thread has changed a state');
  const late = new Scheduler(sh, 35, false, null);
  const early = new Scheduler(sh, 2, false, null);
  const main = new Scheduler(sh, L.mainExecutor, false, null);
  t.equal(Atomics.load(sh.ctl, L.epochSummaryWord(0)) | Atomics.load(sh.ctl, L.epochSummaryWord(35)), 0, 'a Scheduler made is not a change');
  late.setState(L.peActor(35), ACTOR_STATE.RUNNING);
  t.equal(stateEpoch(sh), 1, 'a thread of the second word');
  early.setState(L.peActor(2), ACTOR_STATE.RUNNING);
  early.block(L.peActor(2), L.exec(2, EXEC.DOORBELL), 1, 0, 0, 10);
  main.setState(L.hostActor(L.mainHost), ACTOR_STATE.RUNNING);
  t.equal(stateEpoch(sh), 4, 'and one of the first word, and main (the last thread)');
  t.equal(Atomics.load(sh.ctl, L.epochSummaryWord(0)), 1 << 2, 'the first word names thread 2 alone');
  t.equal(Atomics.load(sh.ctl, L.epochSummaryWord(40)), (1 << (35 - 32)) | (1 << (L.mainExecutor - 32)), 'the second names 35 and main');
  for (let k = 0; k < 100; k++) (k % 2 ? early : late).countStateChange();
  t.equal(stateEpoch(sh), fullSum(sh), 'equal to every thread\'s word summed');
  t.equal(stateEpoch(sh), 104);
});

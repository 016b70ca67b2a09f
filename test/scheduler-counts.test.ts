// Runs on: main thread (tap), no threads. Covers: what a wait costs a thread in
// shared-memory operations (lib/sync/scheduler.ts, decisions 0234 and 0291): a block of one
// of the thread's own actors stores only the wait words that changed since its
// last block (it is their only writer: lib/sync/owned.ts), another thread's actor
// all four as before, and the words hold the wait either way; a sweep of the
// thread's waiters reads the doorbell once, not once a waiter's word.
import t from 'tap';
import { ACTOR, ACTOR_STATE, EXEC, PE, WAIT_KIND } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { setOwnActors } from '../lib/sync/owned.js';
import { NO_ACTOR, Scheduler } from '../lib/sync/scheduler.js';

const dims = { executors: 2, pes: 8, hosts: 2, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 4096 };

/** Calls of Atomics[op] made by `f` whose index satisfies `which`, with those through `sh.load` and `sh.store` (decisions 0278, 0291). */
function counted(op: 'store' | 'load', which: (index: number) => boolean, f: () => void, sh?: SharedState): number {
  const real = Atomics[op] as (a: Int32Array, i: number, v?: number) => number;
  let n = 0;
  (Atomics as unknown as Record<string, unknown>)[op] = (a: Int32Array, i: number, v?: number): number => {
    if (which(i)) n++;
    return op === 'store' ? real(a, i, v) : real(a, i);
  };
  const state = sh as unknown as Record<'load' | 'store', (word: number, value?: number) => number> | undefined;
  const through = state?.[op];
  if (state !== undefined && through !== undefined) {
    state[op] = (i: number, v?: number): number => {
      if (which(i)) n++;
      return through(i, v);
    };
  }
  try {
    f();
  } finally {
    (Atomics as unknown as Record<string, unknown>)[op] = real;
    if (state !== undefined && through !== undefined) state[op] = through;
  }
  return n;
}

t.test('a block of an own actor stores only the wait words that changed; another thread\'s actor all four', async (t) => {
  const sh = SharedState.create(dims);
  const L = sh.layout;
  // Executor 0 runs PEs 0-3, executor 1 PEs 4-7.
  setOwnActors(sh, [0, 0, 0, 0, 1, 1, 1, 1], [0, 1], 0);
  const sched = new Scheduler(sh, 0, false, null);
  const waitWords = (a: number) => (i: number): boolean => i >= L.actor(a, ACTOR.WAIT_WORD) && i <= L.actor(a, ACTOR.WAIT_AUX);
  const read = (a: number): number[] => [ACTOR.WAIT_WORD, ACTOR.WAIT_TARGET, ACTOR.WAIT_KIND, ACTOR.WAIT_AUX].map((f) => Atomics.load(sh.ctl, L.actor(a, f)));
  const ring = L.pe(1, PE.DONE_SEQ);

  const own = L.channelActor(0, 4); // an inbound channel of PE 0: this thread's
  t.equal(counted('store', waitWords(own), () => sched.block(own, ring, 1, WAIT_KIND.IPCQ_DATA, 5, 100), sh), 4, 'the first block stores every word that changed');
  t.same(read(own), [ring, 1, WAIT_KIND.IPCQ_DATA, 5]);
  sched.unblock(own);
  t.equal(counted('store', waitWords(own), () => sched.block(own, ring, 2, WAIT_KIND.IPCQ_DATA, 5, 200), sh), 1, 'the same ring again: the target only');
  t.same(read(own), [ring, 2, WAIT_KIND.IPCQ_DATA, 5], 'the words hold the new wait');
  t.equal(Atomics.load(sh.ctl, L.actor(own, ACTOR.STATE)), ACTOR_STATE.BLOCKED, 'published BLOCKED after its words');
  sched.unblock(own);
  t.equal(counted('store', waitWords(own), () => sched.block(own, ring, 2, WAIT_KIND.CHANNEL, 6, 300), sh), 2, 'another kind and aux, same word and target: those two');
  t.same(read(own), [ring, 2, WAIT_KIND.CHANNEL, 6]);
  sched.unblock(own);

  const foreign = L.channelActor(4, 4); // PE 4 is executor 1's: its words are not this thread's alone
  sched.block(foreign, ring, 1, WAIT_KIND.IPCQ_DATA, 5, 100);
  sched.unblock(foreign);
  t.equal(counted('store', waitWords(foreign), () => sched.block(foreign, ring, 1, WAIT_KIND.IPCQ_DATA, 5, 100), sh), 4, 'another thread\'s actor: all four, as before');
  t.same(read(foreign), [ring, 1, WAIT_KIND.IPCQ_DATA, 5]);
  sched.stop(new Error('test over'));
});

t.test('a sweep reads the doorbell once, whatever the number of waiters, and resolves those whose word is in', async (t) => {
  const sh = SharedState.create(dims);
  const L = sh.layout;
  const here = new Scheduler(sh, 0, false, null);
  const there = new Scheduler(sh, 1, false, null);
  const words = [0, 1, 2, 3, 4, 5].map((pe) => L.pe(pe, PE.DONE_SEQ));
  const woke: number[] = [];
  const waits = words.map((w, i) =>
    here.waitUntil(NO_ACTOR, w, 1, WAIT_KIND.KERNEL_DONE, 0, 0).then(
      () => void woke.push(i),
      () => undefined,
    ),
  );
  await Promise.resolve();
  t.equal(here.waiterCount, words.length, 'every waiter is parked');
  // Another thread publishes two of the words and rings this one.
  Atomics.store(sh.ctl, words[1], 1);
  Atomics.store(sh.ctl, words[4], 1);
  there.ring(0);
  const doorbell = L.exec(0, EXEC.DOORBELL);
  const local = L.pe(7, PE.DONE_SEQ);
  // A local publish looks at the doorbell, finds it rung, and sweeps every waiter's word.
  t.equal(counted('load', (i) => i === doorbell, () => here.signal(local), sh), 1, 'one doorbell read for the sweep of six words');
  for (let i = 0; i < 10; i++) await Promise.resolve();
  t.same(woke.sort(), [1, 4], 'the two waiters whose words are in resumed');
  t.equal(here.waiterCount, words.length - 2);
  here.stop(new Error('test over'));
  there.stop(new Error('test over'));
  await Promise.all(waits);
});

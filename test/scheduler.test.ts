// Runs on: main thread (tap). Covers: lib/sync/scheduler.ts — a waiter
// woken from another thread resumes at this thread's next local publish, not
// only when the wake loop gets its turn after every local actor has blocked;
// a broadcast waiter (the host barrier's) wakes from one notify on its word,
// with no doorbell rung, tells its listener (the host barrier's leave) as it
// settles, and is rejected on abort.
// Two Schedulers on one SharedState stand for two executor threads.
import t from 'tap';
import { AbortError } from '../lib/errors.js';
import { NO_ACTOR, Scheduler } from '../lib/sync/scheduler.js';
import { abortSession } from '../lib/sync/wake.js';
import { ABORT_KIND, ACTOR, ACTOR_STATE, EXEC, HEADER, PE, WAIT_KIND } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';

const microtasks = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

t.test('a remote wake is picked up by the next local signal, before any macrotask', async (t) => {
  const sh = SharedState.create({ executors: 2, pes: 2, hosts: 2, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 4096 });
  const here = new Scheduler(sh, 0, false, null);
  const there = new Scheduler(sh, 1, false, null);
  const remoteWord = sh.layout.pe(0, PE.DONE_SEQ);
  const localWord = sh.layout.pe(1, PE.DONE_SEQ);
  let woke = false;
  const waiting = here.waitUntil(NO_ACTOR, remoteWord, 1, WAIT_KIND.KERNEL_DONE, 0, 0).then(() => {
    woke = true;
  });
  t.equal(here.waiterCount, 1, 'the waiter is parked');

  // The other thread publishes and rings this one (it wants the counter: a waiter is registered).
  Atomics.store(sh.ctl, remoteWord, 1);
  there.ring(0);
  await microtasks(10);
  t.notOk(woke, 'without a local publish the wake loop has not had its turn yet (it waits for a macrotask)');

  // Any local publish on this thread, on another word, looks at the doorbell first.
  here.signal(localWord);
  await microtasks(10);
  t.ok(woke, 'the remote waiter resumed within microtasks of the local publish');
  await waiting;
  t.equal(here.waiterCount, 0);
  here.stop(new Error('test over'));
  there.stop(new Error('test over'));
});

const dims = { executors: 2, pes: 2, hosts: 2, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 4096 };
/** Settles with 'timeout' if `p` has not settled within `ms` of wall time (a hang detector, not a timing assertion). */
const within = <T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> => Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref())]);

t.test('a broadcast waiter wakes from the producer\'s one notify on the word, with no doorbell rung', async (t) => {
  const sh = SharedState.create(dims);
  const here = new Scheduler(sh, 0, false, null);
  const there = new Scheduler(sh, 1, false, null);
  const word = HEADER.BARRIER_ARRIVALS;
  const doorbell = sh.layout.exec(0, EXEC.DOORBELL);
  const waiting = here.waitBroadcast(NO_ACTOR, word, 2, WAIT_KIND.BARRIER, 0, 0);
  Atomics.add(sh.ctl, word, 1);
  there.broadcast(word); // an arrival short of the target: the waiter parks again
  Atomics.add(sh.ctl, word, 1);
  const rung = Atomics.load(sh.ctl, doorbell);
  there.broadcast(word); // the arrival that completes it
  t.equal(await within(waiting, 5000), undefined, 'the waiter resumed');
  t.equal(Atomics.load(sh.ctl, doorbell), rung, "this thread's doorbell was not rung");
  t.equal(here.waiterCount, 0);
  here.stop(new Error('test over'));
  there.stop(new Error('test over'));
});

t.test('a broadcast waiter is rejected with the abort when the session aborts', async (t) => {
  const sh = SharedState.create(dims);
  const here = new Scheduler(sh, 0, false, null);
  const waiting = here.waitBroadcast(NO_ACTOR, HEADER.BARRIER_ARRIVALS, 1, WAIT_KIND.BARRIER, 0, 0);
  abortSession(sh, ABORT_KIND.RANK_FAILED);
  await t.rejects(within(waiting, 5000), AbortError);
  t.equal(here.waiterCount, 0);
  here.stop(new Error('test over'));
});

t.test("a broadcast waiter's listener is told the wait's aux as it settles, with the actor already RUNNING, before the wait resolves", async (t) => {
  const sh = SharedState.create(dims);
  const here = new Scheduler(sh, 0, false, null);
  const there = new Scheduler(sh, 1, false, null);
  const actor = sh.layout.hostActor(0);
  const state = (): number => Atomics.load(sh.ctl, sh.layout.actor(actor, ACTOR.STATE));
  here.setState(actor, ACTOR_STATE.RUNNING);
  const told: [number, number][] = [];
  let resolved = false;
  const waiting = here.waitBroadcast(actor, HEADER.BARRIER_ARRIVALS, 1, WAIT_KIND.BARRIER, 7, 0, { woke: (aux) => void told.push([aux, state()]) }).then(() => {
    resolved = true;
    t.same(told, [[7, ACTOR_STATE.RUNNING]], 'the listener ran before the promise resolved');
  });
  t.equal(state(), ACTOR_STATE.BLOCKED, 'published BLOCKED while it waits');
  t.same(told, [], 'not told before the word reaches the target');
  Atomics.add(sh.ctl, HEADER.BARRIER_ARRIVALS, 1);
  there.broadcast(HEADER.BARRIER_ARRIVALS);
  t.equal(await within(waiting, 5000), undefined, 'the waiter resumed');
  t.ok(resolved);
  here.stop(new Error('test over'));
  there.stop(new Error('test over'));
});

t.test("a broadcast waiter whose listener throws rejects with the listener's error", async (t) => {
  const sh = SharedState.create(dims);
  const here = new Scheduler(sh, 0, false, null);
  const there = new Scheduler(sh, 1, false, null);
  const boom = new Error('listener failed');
  const waiting = here.waitBroadcast(NO_ACTOR, HEADER.BARRIER_ARRIVALS, 1, WAIT_KIND.BARRIER, 0, 0, {
    woke: () => {
      throw boom;
    },
  });
  Atomics.add(sh.ctl, HEADER.BARRIER_ARRIVALS, 1);
  there.broadcast(HEADER.BARRIER_ARRIVALS);
  t.equal(await within(waiting.catch((e: unknown) => e), 5000), boom);
  t.equal(here.waiterCount, 0);
  here.stop(new Error('test over'));
  there.stop(new Error('test over'));
});

/** A promise-free waiter (Scheduler.parkWaiter) that records how it settled and runs `then` as it resumes. */
class Recorder {
  settled = false;
  readonly broadcast = false;
  resolved = 0;
  rejected: Error[] = [];
  constructor(
    public word: number,
    public target: number,
    private readonly then: () => void = () => undefined,
  ) {}
  resolve(): void {
    this.resolved++;
    this.then();
  }
  reject(e: Error): void {
    this.rejected.push(e);
  }
}

/** Park `w` as a plain waiter of `sched` (no actor published). */
const park = (sched: Scheduler, w: Recorder): void => sched.parkWaiter(NO_ACTOR, w, WAIT_KIND.KERNEL_DONE, 0, 0);
/** Store `v` into `word`, then publish it on `sched`'s thread. */
const publishAt = (sched: Scheduler, sh: SharedState, word: number, v: number): void => {
  Atomics.store(sh.ctl, word, v);
  sched.signal(word);
};

t.test('a parked waiter resumes inside the publish that reaches its target, with no promise in between', async (t) => {
  const sh = SharedState.create(dims);
  const here = new Scheduler(sh, 0, false, null);
  const word = sh.layout.pe(0, PE.DONE_SEQ);
  const w = new Recorder(word, 2);
  park(here, w);
  publishAt(here, sh, word, 1);
  t.equal(w.resolved, 0, 'short of its target it stays parked');
  publishAt(here, sh, word, 2);
  t.equal(w.resolved, 1, 'resolved synchronously by the publish');
  t.equal(here.waiterCount, 0);
  here.stop(new Error('test over'));
});

t.test('a waiter that publishes and parks again as it resumes: every waiter resumes once, and the count stays true', async (t) => {
  const sh = SharedState.create(dims);
  const here = new Scheduler(sh, 0, false, null);
  const word = sh.layout.pe(0, PE.DONE_SEQ);
  // a resumes at 1, publishes 2 (which b waits for) and parks `again` for 3, which the test then publishes.
  const again = new Recorder(word, 3);
  const b = new Recorder(word, 2);
  const a = new Recorder(word, 1, () => {
    publishAt(here, sh, word, 2);
    park(here, again);
  });
  park(here, a);
  park(here, b);
  publishAt(here, sh, word, 1);
  t.same([a.resolved, b.resolved, again.resolved], [1, 1, 0], 'a once, b once (from inside a), the new wait parked');
  t.equal(here.waiterCount, 1, 'one waiter left: the one a parked');
  publishAt(here, sh, word, 3);
  t.same([a.resolved, b.resolved, again.resolved], [1, 1, 1]);
  t.equal(here.waiterCount, 0);
  here.stop(new Error('test over'));
});

t.test('a parked waiter is rejected once on abort, and at once when parked after it', async (t) => {
  const sh = SharedState.create(dims);
  const here = new Scheduler(sh, 0, false, null);
  const word = sh.layout.pe(0, PE.DONE_SEQ);
  const w = new Recorder(word, 1);
  park(here, w);
  abortSession(sh, ABORT_KIND.RANK_FAILED);
  here.signal(sh.layout.pe(1, PE.DONE_SEQ)); // any local publish looks at the doorbell the abort rang, and sweeps
  t.equal(w.rejected.length, 1);
  t.type(w.rejected[0], AbortError);
  t.equal(here.waiterCount, 0);
  const late = new Recorder(word, 1);
  park(here, late);
  t.equal(late.rejected.length, 1, 'parked after the abort: rejected at once');
  t.equal(here.waiterCount, 0);
  here.stop(new Error('test over'));
});

t.test('waiters on words that share a slot of the waiter filter are each resumed by their own word', async (t) => {
  const sh = SharedState.create({ ...dims, pes: 512 });
  const here = new Scheduler(sh, 0, false, null);
  const there = new Scheduler(sh, 1, false, null);
  const slots = 1 << 13; // FILTER_SLOTS in lib/sync/scheduler.ts
  const x = sh.layout.pe(0, PE.DONE_SEQ);
  const y = x + slots;
  t.ok(y < sh.ctl.length, 'the two words exist');
  const a = new Recorder(x, 1);
  const b = new Recorder(y, 1);
  park(here, a);
  park(here, b);
  publishAt(here, sh, x, 1);
  t.same([a.resolved, b.resolved], [1, 0], 'x resumes its waiter only');
  publishAt(here, sh, y, 1);
  t.same([a.resolved, b.resolved], [1, 1], 'y, in the same slot, still resumes its own');
  t.equal(here.waiterCount, 0);

  // A broadcast waiter that settles through its own wait on the word, then a waiter in its slot.
  const word = HEADER.BARRIER_ARRIVALS;
  const c = new Recorder(word + slots, 1);
  const barrier = here.waitBroadcast(NO_ACTOR, word, 1, WAIT_KIND.BARRIER, 0, 0);
  park(here, c);
  Atomics.add(sh.ctl, word, 1);
  Atomics.notify(sh.ctl, word); // another thread's arrival: no local signal
  t.equal(await within(barrier, 5000), undefined, 'the broadcast waiter resumed');
  publishAt(here, sh, word + slots, 1);
  t.equal(c.resolved, 1, 'the waiter sharing its slot is still found');
  t.equal(here.waiterCount, 0);
  here.stop(new Error('test over'));
  there.stop(new Error('test over'));
});

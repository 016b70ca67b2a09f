// Runs on: every thread that hosts actors (executors and main). Owns: how an
// actor on this thread waits for `ctl[word] >= target` without blocking the
// thread's event loop, and how a publisher wakes the waiter: when to look at
// the waiters (a publish, the wake loop, an abort) and the actors' published
// states. The waiters themselves, by word, are its WaiterTable's
// (./waiter-table.ts).
//
// There is one wait condition in kernbench — a monotonic counter reaching a
// target — so there is one waiting facility:
//
//   waitUntil(actor, word, target)   fast path: already true, no await.
//                                    slow path: publish the actor as BLOCKED
//                                    (for the deadlock detector), park a
//                                    resolver under `word`.
//   publish(word, executor)          after a producer stored a counter:
//                                    same thread  -> resolve local waiters of
//                                                    `word` (a microtask, no syscall);
//                                    other thread -> bump that thread's doorbell,
//                                                    notify only if it is parked.
//
//   waitBroadcast(actor, word, target)  a word that waiters on many threads
//                                    wait for at once (the host barrier's
//                                    arrivals): as waitUntil, and the waiter
//                                    also parks an Atomics.waitAsync on the
//                                    word itself.
//   broadcast(word)                  after a producer stored such a word:
//                                    resolve local waiters, then one
//                                    Atomics.notify on the word wakes every
//                                    other thread's (no doorbell, no sweep:
//                                    bench barrier_throughput, decision 0022).
//
// A thread with remote waiters runs one wake loop: sweep all waiters, then
// (backpressure `poll`) yield with setImmediate for a short budget, or park in
// Atomics.waitAsync on its doorbell. The thread's event loop is never blocked,
// so every other actor on the thread keeps running (DESIGN §3).
//
// Lost-wakeup argument (producer P, parked thread T):
//   T: seen = load(doorbell); sweep; add(sleepGen) -> odd; waitAsync(doorbell, seen)
//   P: store(counter); add(doorbell); if load(sleepGen) is odd: notify(doorbell)
// If P reads an even sleepGen, its doorbell add precedes T's sleepGen add in the
// sequentially consistent order, so T's waitAsync sees doorbell != seen and
// returns at once. Otherwise P notifies a parked (or about to park) T.
// A broadcast waiter W and its producer P follow the same rule on the word:
//   W: v = load(word); if v < target: waitAsync(word, v)
//   P: add(word); notify(word)
// If P's add follows W's load, W's waitAsync sees word != v or is notified.
import { AbortError, DeadlockError, reviveError } from '../errors.js';
import { ringCoordinator, TurnEndRing } from './wake.js';
import { ABORT_KIND, ACTOR, ACTOR_STATE, EXEC, HEADER } from '../shm/layout.js';
import { markActive } from '../shm/active-actors.js';
import { countStateChange, type ErrorSlot, type SharedState } from '../shm/shared-state.js';
import type { Jitter } from './jitter.js';
import { collectIfIdle } from './young-gc.js';
import { ownSetImmediate } from './own-timers.js';
import { BroadcastWaiter, NO_ACTOR, WaiterTable, type BroadcastListener, type Waiter } from './waiter-table.js';
import { ownsWord } from './owned.js';
import { actorActive } from './pe-floor.js';

export type { BroadcastListener, Waiter } from './waiter-table.js';
export { NO_ACTOR } from './waiter-table.js';

/** Setimmediate rounds a `poll` thread spins before parking (spin only with a budget: DESIGN §8). */
const POLL_SPIN_BUDGET = 64;

/**
 * Turns a receive that would park for another thread's sender gives this
 * thread's other PEs first, staying RUNNING (Scheduler.turnsFirst; decision 0155).
 */
export const TURNS_BEFORE_PARK = 4;

export class Scheduler {
  private readonly ctl: Int32Array;
  /** This thread's parked waiters, by word. */
  private readonly waiters: WaiterTable;
  private loopRunning = false;
  private readonly doorbell: number;
  private readonly sleepGen: number;
  /** This thread's EXEC.STATE_EPOCH word. */
  private readonly stateEpoch: number;
  /** This thread's bit is set in the epochs' summary (../shm/shared-state.ts countStateChange). */
  private epochNamed = false;
  private stopped = false;
  /** DOORBELL as of the last pollDoorbell. */
  private polled = 0;
  /** Publishes to this thread's waiters and to other threads' (stored in EXEC words at stop: syncCounts, ./wake.ts). */
  private publishesLocal = 0;
  private publishesRemote = 0;
  /** The deadlock's report, once read from the report slot (it is written once, before ABORT). */
  private deadlockReport: ErrorSlot | null | undefined;
  /** The coordinator's rings for this thread's actors that stop (stoppedRunning). */
  private readonly turnRing: TurnEndRing;

  constructor(
    readonly shared: SharedState,
    /** This thread's executor index (the main thread uses layout.mainExecutor). */
    readonly executor: number,
    private readonly poll: boolean,
    readonly jitter: Jitter | null,
    /**
     * The thread runs more than one PE and some PE runs on another thread: a
     * receive that would park for another thread's sender first gives this
     * thread's other PEs a few turns (TURNS_BEFORE_PARK; lib/kernel/context.ts).
     */
    readonly turnsFirst = false,
  ) {
    this.ctl = shared.ctl;
    this.waiters = new WaiterTable(shared.ctl);
    this.doorbell = shared.layout.exec(executor, EXEC.DOORBELL);
    this.sleepGen = shared.layout.exec(executor, EXEC.SLEEP_GEN);
    this.stateEpoch = shared.layout.exec(executor, EXEC.STATE_EPOCH);
    this.turnRing = new TurnEndRing(shared.ctl);
  }

  /** Throws if the session was aborted (a rank failed, or a deadlock was found). */
  checkAbort(): void {
    if (Atomics.load(this.ctl, HEADER.ABORT) !== 0) throw this.abortError();
  }

  /** What every waiter rejects with once the session has aborted (see abortSession in ./wake.ts). */
  abortError(): Error {
    const kind = Atomics.load(this.ctl, HEADER.ABORT_KIND);
    if (kind === ABORT_KIND.DEADLOCK) {
      // Read and parsed once per thread, not once per waiter: at a thousand ranks every
      // actor wakes with this error, and the report is hundreds of KB (issue 23 item 4).
      this.deadlockReport ??= this.shared.readErrorSlot(-1) ?? null;
      if (this.deadlockReport) return reviveError(this.deadlockReport.error);
      return new DeadlockError(['(report unavailable)']);
    }
    if (kind === ABORT_KIND.FAULT) {
      // Not the fault itself: it is the root cause of one actor only; the others were aborted by it.
      const report = this.shared.readErrorSlot(-1);
      return new AbortError(report ? `${report.error.name} [${report.error.code ?? 'no code'}]: ${report.error.message}` : 'an executor thread failed');
    }
    if (kind === ABORT_KIND.STOPPED) return new AbortError('a PE passed the virtual-time limit: the run stops (its report is the session\'s)');
    return new AbortError('another rank or PE failed');
  }

  /** Resolves when ctl[word] >= target. `actor` is published as BLOCKED meanwhile (unless NO_ACTOR). */
  async waitUntil(actor: number, word: number, target: number, kind: number, aux: number, clockPs: number): Promise<void> {
    if (this.jitter) await this.jitter.point();
    this.checkAbort();
    if (Atomics.load(this.ctl, word) >= target) return;
    if (actor !== NO_ACTOR) this.block(actor, word, target, kind, aux, clockPs);
    try {
      await new Promise<void>((resolve, reject) => this.park({ word, target, resolve, reject, broadcast: false, settled: false }));
    } finally {
      if (actor !== NO_ACTOR) this.unblock(actor);
    }
  }

  /**
   * As waitUntil, without a promise: `w.resolve()` is called once
   * ctl[w.word] >= w.target (synchronously, from the publish that made it
   * so, or from this thread's wake loop), `w.reject(e)` on abort or stop.
   * The caller has checked that the condition does not hold yet; `actor` is
   * published as BLOCKED (unless NO_ACTOR), and the waiter publishes it
   * RUNNING again (unblock) as it resumes or fails. For the waits that run
   * once per message (a parked receive, lib/ipcq/recv-state.ts), where a
   * promise, an async frame and their fault-owner tags per wait were most of
   * the cost.
   */
  parkWaiter(actor: number, w: Waiter, kind: number, aux: number, clockPs: number): void {
    if (Atomics.load(this.ctl, HEADER.ABORT) !== 0) {
      w.settled = true;
      w.reject(this.abortError());
      return;
    }
    if (actor !== NO_ACTOR) this.block(actor, w.word, w.target, kind, aux, clockPs);
    w.settled = false;
    this.park(w);
  }

  /**
   * As waitUntil, for a word that waiters on many threads wait for at once and
   * whose producer calls broadcast(word): the waiter also parks an
   * Atomics.waitAsync on the word itself, so one notify wakes every thread's
   * waiters, with no doorbell rung and no wake loop woken (their wake loops
   * stay parked). It is still a waiter of this thread's wake loop, which
   * rejects it on abort or stop. Not an async function: the host barrier
   * waits here once per barrier per rank, and every promise and await costs
   * a promise hook on executors (lib/sync/fault-owner.ts); the actor is
   * published RUNNING again as the waiter settles.
   */
  waitBroadcast(actor: number, word: number, target: number, kind: number, aux: number, clockPs: number, listener?: BroadcastListener): Promise<void> {
    if (this.jitter) return this.jitter.point().then(() => this.parkBroadcast(actor, word, target, kind, aux, clockPs, listener));
    return this.parkBroadcast(actor, word, target, kind, aux, clockPs, listener);
  }

  private parkBroadcast(actor: number, word: number, target: number, kind: number, aux: number, clockPs: number, listener: BroadcastListener | undefined): Promise<void> {
    if (Atomics.load(this.ctl, HEADER.ABORT) !== 0) return Promise.reject(this.abortError());
    if (Atomics.load(this.ctl, word) >= target) {
      if (listener === undefined) return Promise.resolve();
      try {
        listener.woke(aux);
        return Promise.resolve();
      } catch (e) {
        return Promise.reject(e as Error);
      }
    }
    if (actor !== NO_ACTOR) this.block(actor, word, target, kind, aux, clockPs);
    return new Promise<void>((resolve, reject) => {
      const w = new BroadcastWaiter(this, actor, word, target, aux, listener, resolve, reject);
      this.park(w);
      this.watchBroadcast(w);
    });
  }

  /** After storing a broadcast word (see waitBroadcast): resolve this thread's waiters, wake every other thread's. */
  broadcast(word: number): void {
    this.signal(word);
    Atomics.notify(this.ctl, word);
  }

  /** Add a waiter under its word; the wake loop (started if need be) sweeps it. */
  private park(w: Waiter): void {
    this.waiters.add(w);
    if (!this.loopRunning) void this.wakeLoop();
  }

  /**
   * A broadcast waiter's own wait on its word: settle it when the word reaches
   * its target, unless a sweep or rejectAll did first.
   */
  watchBroadcast(w: BroadcastWaiter): void {
    for (;;) {
      if (w.settled) return;
      const v = Atomics.load(this.ctl, w.word);
      if (v >= w.target) break;
      const r = Atomics.waitAsync(this.ctl, w.word, v);
      if (r.async) {
        void r.value.then(w.rewatch);
        return;
      }
    }
    this.waiters.remove(w);
    w.settled = true;
    w.resolve();
  }

  /**
   * Publish the actor's wait for the deadlock detector: fields first, then the thread's
   * epoch, the state, the generation (the order is the snapshots' argument: storeState).
   * A thread's own actor's wait words are written by this thread only (./owned.ts), so a
   * word that already holds its value (a channel parks on the same ring word with the
   * same kind and aux, wave after wave) is not stored again: it was stored before this
   * state store, as a store now would be (decision 0234).
   */
  block(actor: number, word: number, target: number, kind: number, aux: number, clockPs: number): void {
    const L = this.shared.layout;
    const ctl = this.ctl;
    this.shared.times[L.clock(actor)] = clockPs;
    const w = L.actor(actor, 0);
    // Words another thread may write (./owned.ts): always stored.
    const all = !ownsWord(this.shared, actor, ACTOR.WAIT_WORD);
    // Sequentially consistent, as Atomics.store and Atomics.add, through WebAssembly (decision 0291).
    const { store, add } = this.shared;
    if (all || ctl[w + ACTOR.WAIT_WORD] !== word) store(w + ACTOR.WAIT_WORD, word);
    if (all || ctl[w + ACTOR.WAIT_TARGET] !== target) store(w + ACTOR.WAIT_TARGET, target);
    if (all || ctl[w + ACTOR.WAIT_KIND] !== kind) store(w + ACTOR.WAIT_KIND, kind);
    if (all || ctl[w + ACTOR.WAIT_AUX] !== aux) store(w + ACTOR.WAIT_AUX, aux);
    this.storeState(actor, ACTOR_STATE.BLOCKED);
    add(L.actor(actor, ACTOR.GEN), 1);
    this.stoppedRunning();
  }

  unblock(actor: number): void {
    this.setState(actor, ACTOR_STATE.RUNNING);
  }

  /** An actor of this thread changes state: bump the thread's epoch, before the store (storeState). Also a held link piece's hold (lib/ipcq/link-timing.ts). */
  countStateChange(): void {
    if (this.epochNamed) {
      this.shared.add(this.stateEpoch, 1);
      return;
    }
    countStateChange(this.shared, this.executor);
    this.epochNamed = true;
  }

  setState(actor: number, state: number): void {
    const L = this.shared.layout;
    this.storeState(actor, state);
    this.shared.add(L.actor(actor, ACTOR.GEN), 1);
    if (state !== ACTOR_STATE.RUNNING) this.stoppedRunning();
  }

  /**
   * Bump the thread's epoch and store an actor's state, its bit in the active-actor bitmap
   * set before both when it starts being active (RUNNING or BLOCKED) and cleared after the
   * store when it stops; its callers bump the actor's generation after. The bump before
   * the store: a snapshot that reads the new state and the same epoch before and after
   * (lib/coordinator/snapshot.ts) then had the bump before its first read, so it also sees
   * everything the actor published before (a memory request, then BLOCKED on its grant:
   * the arbiter sees the request or the actor still RUNNING, never BLOCKED with its
   * request unseen); with it after, a snapshot could read the new state and its second
   * epoch between the two, and grant a later request first (decision 0252). The bit
   * before the bump: snapshots find actors by the bitmap, so one that read the bitmap
   * after the bump but before a bit set after the store missed an actor that had just
   * started, under an epoch that did not move, and granted a later request first
   * (decision 0260); a bit set early names an actor whose state the snapshot reads as
   * still idle. A reader that keeps what it read at a generation (lib/sync/link-claims.ts's
   * host words) reads the state the generation stands for.
   */
  private storeState(actor: number, state: number): void {
    const L = this.shared.layout;
    const w = L.actor(actor, ACTOR.STATE);
    const was = this.ctl[w]; // this thread is its actors' only writer (./owned.ts): a plain load
    const active = state === ACTOR_STATE.RUNNING || state === ACTOR_STATE.BLOCKED;
    const wasActive = was === ACTOR_STATE.RUNNING || was === ACTOR_STATE.BLOCKED;
    if (active && !wasActive) markActive(this.ctl, L, actor, true);
    this.countStateChange();
    // A PE's floor follows its kernel's activity, set before the state says so (./pe-floor.ts).
    actorActive(this.shared, actor, active);
    this.shared.store(w, state);
    if (!active && wasActive) markActive(this.ctl, L, actor, false);
  }

  /**
   * An actor stopped running (blocked, idle, done). While shared-memory requests
   * or link flows are pending it may have been the last actor that could still
   * ask earlier than one of them: the coordinator runs an arbiter pass
   * (lib/coordinator/arbiter.ts, link-arbiter.ts): rung at the turn's first such
   * stop and once more as the turn ends for all the others (TurnEndRing, decision 0275).
   * Two loads when nothing is pending.
   */
  private stoppedRunning(): void {
    const load = this.shared.load;
    if (load(HEADER.GRANTS_PENDING) === 0 && load(HEADER.FLOWS_PENDING) === 0) return;
    this.turnRing.stopped();
  }

  /**
   * After storing a counter `word` that a waiter on executor `consumer` may need.
   * Same thread: resolve local waiters. Other thread: ring its doorbell.
   */
  publish(word: number, consumer: number): void {
    if (consumer === this.executor) {
      this.publishesLocal++;
      this.signal(word);
    } else {
      this.publishesRemote++;
      this.ring(consumer);
    }
  }

  /** Resolve this thread's waiters on `word` whose target is reached. */
  signal(word: number): void {
    if (this.waiters.count === 0) return;
    this.pollDoorbell();
    this.waiters.wake(word);
  }

  /** What signal does for a word no local waiter waits on: only look whether another thread rang. */
  signalNone(): void {
    if (this.waiters.count === 0) return;
    this.pollDoorbell();
  }

  /**
   * Sweep now if another thread rang since the last look. The wake loop only
   * gets a turn once the thread's microtasks drain, so a waiter woken from
   * another thread would otherwise wait until every local actor is blocked;
   * every local publish looks here first (one load, SharedState.load).
   */
  private pollDoorbell(): void {
    const db = this.shared.load(this.doorbell);
    if (db === this.polled) return;
    this.polled = db;
    this.sweep();
  }

  /** Wake executor `e` (another thread): bump its doorbell; notify only if it is parked. */
  ring(e: number): void {
    const L = this.shared.layout;
    const db = L.exec(e, EXEC.DOORBELL);
    Atomics.add(this.ctl, db, 1);
    if ((Atomics.load(this.ctl, L.exec(e, EXEC.SLEEP_GEN)) & 1) === 1) {
      Atomics.add(this.ctl, L.exec(e, EXEC.NOTIFIES), 1);
      Atomics.notify(this.ctl, db);
    }
  }

  /** Stop the wake loop and reject every waiter (session end or abort). */
  stop(reason: Error): void {
    this.stopped = true;
    Atomics.store(this.ctl, this.shared.layout.exec(this.executor, EXEC.PUBLISHES_LOCAL), this.publishesLocal);
    Atomics.store(this.ctl, this.shared.layout.exec(this.executor, EXEC.PUBLISHES_REMOTE), this.publishesRemote);
    this.rejectAll(reason);
    Atomics.add(this.ctl, this.doorbell, 1);
    Atomics.notify(this.ctl, this.doorbell);
  }

  get waiterCount(): number {
    return this.waiters.count;
  }

  private rejectAll(e: Error): void {
    const watched = this.waiters.rejectAll(e);
    // Release the broadcast waiters' own waitAsyncs (each holds the buffer until woken); other threads' wake spuriously and wait again.
    for (const word of watched) Atomics.notify(this.ctl, word);
  }

  /**
   * Resolve every waiter whose word reached its target. The doorbell is read once, by the
   * caller (pollDoorbell, the wake loop), not once a word: a resolve that publishes looks at
   * it again (signal), and a ring after that read is seen there or by the wake loop (decision 0234).
   */
  private sweep(): void {
    if (Atomics.load(this.ctl, HEADER.ABORT) !== 0) {
      this.rejectAll(this.abortError());
      return;
    }
    this.waiters.wakeAll();
  }

  private async wakeLoop(): Promise<void> {
    this.loopRunning = true;
    try {
      while (this.waiters.count > 0 && !this.stopped) {
        const seen = Atomics.load(this.ctl, this.doorbell);
        this.polled = seen;
        this.sweep();
        if (this.waiters.count === 0) break;
        if (this.poll) {
          let changed = false;
          for (let i = 0; i < POLL_SPIN_BUDGET && !changed; i++) {
            await new Promise<void>((r) => ownSetImmediate(r));
            changed = Atomics.load(this.ctl, this.doorbell) !== seen || this.waiters.count === 0;
          }
          if (changed) continue;
        } else {
          // Let same-thread actors run first: they may satisfy the waiters without any park.
          await new Promise<void>((r) => ownSetImmediate(r));
          if (Atomics.load(this.ctl, this.doorbell) !== seen || this.waiters.count === 0) continue;
        }
        // Nothing here can run until another thread publishes: the coordinator's ring first, then housekeeping.
        this.turnRing.pay();
        if (collectIfIdle() && Atomics.load(this.ctl, this.doorbell) !== seen) continue;
        // Pieces held for their links: the coordinator's pass releases what may go, or hands them to the arbiter (decision 0248).
        if (Atomics.load(this.ctl, HEADER.HELD_PENDING) > 0) ringCoordinator(this.ctl);
        Atomics.add(this.ctl, this.sleepGen, 1); // odd: parked
        const r = Atomics.waitAsync(this.ctl, this.doorbell, seen);
        if (r.async) await r.value;
        Atomics.add(this.ctl, this.sleepGen, 1); // even: awake
      }
    } finally {
      this.loopRunning = false;
    }
  }
}

// Runs on: any thread. Owns: waking every thread of a session at once (abort,
// deadlock, session end), so parked waiters re-check the abort word; the abort
// itself (abortSession) and the coordinator's doorbell (ringCoordinator; a
// thread's rings for its stops, at most two a turn, TurnEndRing; and the
// coordinator's side, CoordinatorDoorbell); and the
// count of a session's synchronisations between threads, read from its words
// once every thread has stopped (syncCounts).
import type { SerializedError } from '../errors.js';
import { ABORT_KIND, EXEC, HEADER, RING, SLOT } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';
import { ownSetImmediate } from './own-timers.js';

export function wakeAllThreads(sh: SharedState): void {
  const L = sh.layout;
  for (let e = 0; e <= L.dims.executors; e++) {
    const db = L.exec(e, EXEC.DOORBELL);
    Atomics.add(sh.ctl, db, 1);
    Atomics.notify(sh.ctl, db);
  }
}

/** Wake the coordinator thread: bump its doorbell; notify only if it is parked (the argument of the header's wake loop). */
export function ringCoordinator(ctl: Int32Array): void {
  Atomics.add(ctl, HEADER.COORD_DOORBELL, 1);
  if (Atomics.load(ctl, HEADER.COORD_PARKED) === 1) Atomics.notify(ctl, HEADER.COORD_DOORBELL);
}

/**
 * A thread's rings for the arbiters' passes: at most two a turn of its event loop. An
 * actor that stops while requests are pending (Scheduler.stoppedRunning) may have been
 * the last that bounded one of them. The turn's first stop rings at once: an actor
 * alone on its thread (a PE waiting for its memory grant) waits no longer for its pass.
 * Every later stop of the turn owes one more ring, paid when the turn ends (an
 * immediate: every actor resumed in the turn has run to its next stop) or when the
 * thread parks. A pass rung at each of them ran while the thread still ran actors: its
 * snapshot read a moving state epoch and failed, or a bound the running actors held low
 * (decision 0275). The thread's event loop is never blocked (./scheduler.ts), so a turn
 * always ends and a ring owed is paid.
 */
export class TurnEndRing {
  /** A stop rang in this turn: later ones owe the ring at its end. */
  private turnRang = false;
  private owed = false;
  /** The immediate that ends the turn; a field, not a closure a turn. */
  private readonly endTurn = (): void => {
    this.turnRang = false;
    this.pay();
  };

  constructor(private readonly ctl: Int32Array) {}

  /** An actor stopped with requests pending: ring now if it is the turn's first, else owe one ring at its end. */
  stopped(): void {
    if (this.turnRang) {
      this.owed = true;
      return;
    }
    this.turnRang = true;
    ringCoordinator(this.ctl);
    ownSetImmediate(this.endTurn);
  }

  /** Pay the ring owed, if any: at the turn's end, or before the thread parks. */
  pay(): void {
    if (!this.owed) return;
    this.owed = false;
    ringCoordinator(this.ctl);
  }
}

/**
 * The coordinator's side of its doorbell (ringCoordinator rings it). A ring is never
 * lost: one that comes while a pass runs makes the next wait return at once, and so
 * does one that came before the coordinator attached to the session. Executors run
 * kernels as soon as their launches arrive, so a kernel may ask for a grant and ring
 * before the coordinator has read the session's first message; a doorbell first read
 * then would have taken those rings as seen, and the grant waited for the timer.
 */
export class CoordinatorDoorbell {
  /** The doorbell's value when the last wait returned; -1 (no value it takes) before the first. */
  private seen = -1;

  constructor(private readonly ctl: Int32Array) {}

  /** Park until a ring not yet seen, or for `timerMs`. True when rung (the pass it brings was asked for). */
  wait(timerMs: number): boolean {
    const ctl = this.ctl;
    Atomics.store(ctl, HEADER.COORD_PARKED, 1);
    const woke = Atomics.wait(ctl, HEADER.COORD_DOORBELL, this.seen, timerMs);
    Atomics.store(ctl, HEADER.COORD_PARKED, 0);
    // Read before the pass: a ring that comes during it makes the next wait return at once.
    this.seen = Atomics.load(ctl, HEADER.COORD_DOORBELL);
    // Only a timeout is a pass nobody asked for. A notify with the doorbell unchanged is a
    // ring whose add the previous pass already read (its notify came after this wait began).
    return woke !== 'timed-out';
  }
}

/**
 * Abort the session: claim ABORT_KIND (the first aborter wins; later calls
 * return false, change nothing, and return only once the winner's abort is
 * done), write the report (if any) to the report slot, bump ABORT, wake every
 * thread. Every waiter then rejects with
 * Scheduler.abortError(). Any thread may call it (main, coordinator, executors).
 */
export function abortSession(sh: SharedState, kind: number, report?: SerializedError, winnerDeadMs = WINNER_DEAD_MS): boolean {
  const ctl = sh.ctl;
  if (Atomics.compareExchange(ctl, HEADER.ABORT_KIND, ABORT_KIND.NONE, kind) !== ABORT_KIND.NONE) {
    // Another thread claimed the abort and may not have written its report yet: a loser that
    // went on would fail its owners with AbortErrors that could settle a join before the report
    // exists ("no rank reported a root cause", decision 0254). The winner is a few synchronous
    // steps from its add; only a winner whose thread died in them never makes it, and then
    // the loser ends the abort itself, without the report, rather than wait for ever.
    if (Atomics.wait(ctl, HEADER.ABORT, 0, winnerDeadMs) === 'timed-out') finishAbort(sh);
    return false;
  }
  try {
    if (report) sh.writeErrorSlot(-1, { error: report });
  } finally {
    finishAbort(sh);
  }
  return true;
}

/** How long a loser of the abort's claim waits for the winner's report before taking its thread for dead (a test passes less). */
const WINNER_DEAD_MS = 10_000;

/** The abort's last step: bump ABORT (every waiter now rejects), wake the losers of the claim and every thread. */
function finishAbort(sh: SharedState): void {
  Atomics.add(sh.ctl, HEADER.ABORT, 1);
  Atomics.notify(sh.ctl, HEADER.ABORT);
  wakeAllThreads(sh);
}

/**
 * How often a session's threads synchronised, summed over its executors and main
 * (decision 0126). Read after every scheduler stopped (Scheduler.stop stores its publishes).
 */
export interface SyncCounts {
  /** IPCQ messages whose ring's sender and receiver PEs run on different threads (of the plan's peExecutor). */
  crossThreadMessages: number;
  /** Publishes whose waiter was on the publishing thread: no synchronisation. */
  publishesLocal: number;
  /** Publishes whose waiter was on another thread: each an Atomics.add on its doorbell. */
  publishesRemote: number;
  /** Doorbell bumps: remote publishes, command-queue and coordinator wakes, and one per thread at stop. */
  rings: number;
  /** Atomics.notify on a parked thread's doorbell (a futex wake), from Scheduler.ring. */
  notifies: number;
  /** Times a thread parked in Atomics.waitAsync on its doorbell (half its SLEEP_GEN). */
  parks: number;
  /** Rings of the coordinator (an arbiter pass asked for): a round trip through its thread. */
  coordinatorRings: number;
  /** Actor state changes (every thread's EXEC.STATE_EPOCH): each an Atomics.add on the thread's own word. */
  stateChanges: number;
}

export function syncCounts(sh: SharedState, peExecutor: readonly number[]): SyncCounts {
  const L = sh.layout;
  const c: SyncCounts = { crossThreadMessages: 0, publishesLocal: 0, publishesRemote: 0, rings: 0, notifies: 0, parks: 0, coordinatorRings: Atomics.load(sh.ctl, HEADER.COORD_DOORBELL), stateChanges: 0 };
  for (let e = 0; e <= L.dims.executors; e++) {
    c.publishesLocal += Atomics.load(sh.ctl, L.exec(e, EXEC.PUBLISHES_LOCAL));
    c.publishesRemote += Atomics.load(sh.ctl, L.exec(e, EXEC.PUBLISHES_REMOTE));
    c.rings += Atomics.load(sh.ctl, L.exec(e, EXEC.DOORBELL));
    c.notifies += Atomics.load(sh.ctl, L.exec(e, EXEC.NOTIFIES));
    c.parks += Atomics.load(sh.ctl, L.exec(e, EXEC.SLEEP_GEN)) >>> 1;
    c.stateChanges += Atomics.load(sh.ctl, L.exec(e, EXEC.STATE_EPOCH));
  }
  // A ring has one sender and one receiver: its first slot's header names the receiver.
  for (let r = 0; r < L.rings; r++) {
    const sent = Atomics.load(sh.ctl, L.ring(r, RING.TAIL));
    if (sent === 0) continue;
    const receiver = sh.ipcq[L.setOfRing(r)].i32[(L.slotOffset(r, 0) + SLOT.RECEIVER) >>> 2];
    if (peExecutor[receiver] !== peExecutor[L.senderOfRing(r)]) c.crossThreadMessages += sent;
  }
  return c;
}

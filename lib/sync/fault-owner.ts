// Runs on: executor threads. Owns: knowing which actor — a spawned rank's host
// code, or one kernel run on a PE — an error that escaped every promise chain
// belongs to (a throw in a setTimeout callback, an unhandled rejection,
// process.exit() called from a callback).
//
// By thread first (docs/decisions/0026-fault-attribution-by-thread.md): while
// at most one owner is live on this thread, the code that faulted is that
// owner's, and nothing is tracked per promise. Only while two or more are live
// (a rank's host and a kernel of its PEs, or several ranks on one thread) are
// V8's promise hooks on: each promise is tagged with the owner of the code
// that created it, and a continuation runs as its promise's owner. Timer,
// immediate, nextTick and microtask callbacks are bound to the owner that
// scheduled them (bindToOwner, installed by lib/executor/faults.ts), whichever
// mode the thread is in when they fire. While its owner runs, run() races the
// owner's promise chain against such a fault: the owner fails at once with it,
// as if its chain had thrown.
import { promiseHooks } from 'node:v8';
import { ownClearImmediate, ownClearTimeout } from './own-timers.js';

export class FaultOwner {
  /** True until the owner's chain settles (returned, threw, or faulted). */
  live = true;
  /** The fault that failed the owner, if one did (set by fail()). */
  faulted: Error | undefined;
  private reject: ((e: Error) => void) | undefined;
  /** The timers, intervals and immediates this owner scheduled that have neither fired (an interval: never) nor been cleared. */
  private readonly timers = new Set<TimerHandle>();
  /** Resolves timersDone()'s promise once `timers` holds no ref'd timer. */
  private timersIdle: (() => void) | undefined;

  constructor(
    /** For messages: `rank 3`, `kernel 'k' on PE (sip 0, cube 0, pe 0)`. */
    readonly who: string,
    /** The owner's virtual time now, in ps (when the fault is caught). */
    readonly clockPs: () => number,
  ) {}

  /** Fail the owner with `e`. Returns false (and does nothing) once the owner has settled. */
  fail(e: Error): boolean {
    if (!this.live || !this.reject) return false;
    this.live = false;
    this.faulted = e;
    this.reject(e);
    return true;
  }

  /** End the owner's run with `e` (an AbortError) now, as an abort would: it is not the owner's fault. */
  abort(e: Error): void {
    if (!this.live || !this.reject) return;
    this.live = false;
    this.reject(e);
  }

  /**
   * Call `fn` as this owner, whatever the promise it continues from was tagged with: the
   * user's function, called after an await whose promise may be untagged or another's
   * (a module import shared by two ranks on one thread), starts as its owner, and the
   * promises and timers of its synchronous part are this owner's.
   */
  callAs<T>(fn: () => T): T {
    const prev = current;
    current = this;
    try {
      return fn();
    } finally {
      current = prev;
    }
  }

  /** A timer this owner scheduled (lib/executor/faults.ts). */
  timerStarted(h: TimerHandle): void {
    this.timers.add(h);
    TIMER_OWNER.set(h, this);
  }

  /** A timer of this owner fired (once-only kinds) or was cleared. */
  timerEnded(h: TimerHandle): void {
    if (!this.timers.delete(h)) return;
    if (this.timersIdle !== undefined && !this.hasRefTimers()) {
      const idle = this.timersIdle;
      this.timersIdle = undefined;
      idle();
    }
  }

  private hasRefTimers(): boolean {
    for (const h of this.timers) if (h.hasRef()) return true;
    return false;
  }

  /**
   * Resolves once every timer, interval and immediate this owner scheduled (and its
   * callbacks scheduled in turn) has run or been cleared, as a Node process waits for
   * its timers before it exits; unref'd ones are not waited for. A spawned rank ends
   * only then (lib/executor/executor.ts), so a throw in its timer fails that rank, in
   * the spawn that started it, whatever the wall-clock delay (decision 0096).
   */
  timersDone(): Promise<void> {
    if (!this.hasRefTimers()) return Promise.resolve();
    return new Promise<void>((r) => (this.timersIdle = r));
  }

  /** Clear every timer of this owner still pending: none of them runs after the owner has ended. */
  private cancelTimers(): void {
    for (const h of this.timers) clearHandle(h);
    this.timers.clear();
    this.timersIdle = undefined;
  }

  /** Run `fn` as this owner: its outcome, or the fault that failed it while it ran, whichever comes first. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const faulted = new Promise<never>((_, reject) => (this.reject = reject));
    enter(this);
    let result: Promise<T>;
    const prev = current;
    current = this;
    try {
      result = fn();
    } catch (e) {
      result = Promise.reject(e as Error);
    } finally {
      current = prev;
    }
    try {
      return await Promise.race([result, faulted]);
    } finally {
      this.live = false;
      // A timer still pending (the owner threw, failed or was aborted first, or did not
      // wait for it) would otherwise fire later as nobody's fault, charged to whatever
      // runs then: it is cancelled with its owner (decision 0096).
      if (this.timers.size > 0) this.cancelTimers();
      leave(this);
    }
  }
}

/** What setTimeout, setInterval and setImmediate return: Node's Timeout and Immediate both have these. */
export interface TimerHandle {
  hasRef(): boolean;
}

/** Clear a Timeout (a timer or an interval: it has close()) or an Immediate. */
function clearHandle(h: TimerHandle): void {
  if (typeof (h as { close?: unknown }).close === 'function') ownClearTimeout(h as unknown as NodeJS.Timeout);
  else ownClearImmediate(h as unknown as NodeJS.Immediate);
}

/** The owner each tracked timer belongs to, for the cleared timer's bookkeeping (timerCleared). */
const TIMER_OWNER = new WeakMap<object, FaultOwner>();

/** A timer was cleared (clearTimeout, clearInterval, clearImmediate): its owner stops waiting for it. */
export function timerCleared(h: unknown): void {
  if (typeof h !== 'object' || h === null) return;
  TIMER_OWNER.get(h)?.timerEnded(h as TimerHandle);
}

/**
 * Schedule `cb` with `schedule` (setTimeout, setInterval or setImmediate) as the
 * owner of the code running now, tracked by it (FaultOwner.timersDone); `schedule`
 * as is when no owner runs now. `repeats`: an interval, which ends only when cleared.
 */
export function scheduleAsOwner(schedule: (cb: (...a: unknown[]) => unknown, ...rest: unknown[]) => unknown, self: unknown, cb: unknown, rest: unknown[], repeats: boolean): unknown {
  const owner = currentFaultOwner();
  if (owner === undefined || typeof cb !== 'function') return schedule.call(self, cb as (...a: unknown[]) => unknown, ...rest);
  const bound = bindToOwner(cb as (...a: unknown[]) => unknown);
  let handle: TimerHandle | undefined;
  const run = repeats
    ? bound
    : function fire(this: unknown, ...a: unknown[]): unknown {
        try {
          return bound.apply(this, a);
        } finally {
          if (handle !== undefined) owner.timerEnded(handle);
        }
      };
  handle = schedule.call(self, run, ...rest) as TimerHandle;
  owner.timerStarted(handle);
  return handle;
}

/** The owner a promise was created by (null: by no owner); absent on promises created while the hooks were off. */
const OWNER = Symbol('kernbench.faultOwner');
type Tagged = { [OWNER]?: FaultOwner | null };

/** Owners whose run() has not settled, on this thread. */
const live = new Set<FaultOwner>();
/** The owner of the code running now, when known: set by run() and bound callbacks, and (hooks on) by the continuation's promise. */
let current: FaultOwner | undefined;
/** Stops the promise hooks; set while they are on (two or more owners live). */
let stopHooks: (() => void) | undefined;
/** While the hooks are on: the owner of untagged promises (created while it was the thread's only live owner). */
let untagged: FaultOwner | undefined;
/** The owner of the callback whose exception is propagating now (set by a bound callback, read by ownerOfException). */
let thrown: { error: unknown; owner: FaultOwner } | undefined;

/** Set for the one promise an engine makes through resolvedUntagged or thenUntagged: init leaves it untagged. */
let untaggedNext = false;

/**
 * The tag made general before the hooks first store it (decision 0290). onInit's store,
 * keyed by a symbol, went megamorphic on its second use, on a promise map it had already
 * seen (node --log-ic), and stayed so: every tag a lookup in V8's stub cache or its
 * runtime. A keyed inline cache does that when its handler for a seen map goes stale, as
 * it does when V8 changes the kind of value it tracks for the field. Tagged here first
 * with three kinds (none, an object, an array) on throwaway promises, the field's kind is
 * general before onInit runs, and its store stays polymorphic.
 */
for (const v of [null, {}, []]) (Promise.resolve() as unknown as Record<symbol, unknown>)[OWNER] = v;

function onInit(p: Promise<unknown>): void {
  if (untaggedNext) return;
  (p as Tagged)[OWNER] = current ?? null;
}
function onBefore(p: Promise<unknown>): void {
  const o = (p as Tagged)[OWNER];
  current = o === undefined ? untagged : (o ?? undefined);
}
function onAfter(): void {
  current = undefined;
}

function enter(owner: FaultOwner): void {
  live.add(owner);
  if (live.size === 2 && stopHooks === undefined) {
    for (const o of live) if (o !== owner) untagged = o;
    stopHooks = promiseHooks.createHook({ init: onInit, before: onBefore, after: onAfter }) as () => void;
  }
}

function leave(owner: FaultOwner): void {
  live.delete(owner);
  if (live.size <= 1 && stopHooks !== undefined) {
    stopHooks();
    stopHooks = undefined;
    untagged = undefined;
    // Set by the last continuation's promise; with the hooks off it would stay stale.
    current = undefined;
  }
}

/**
 * After a fault nobody could be failed for (unowned, or its owner had ended) has
 * aborted the session: end every owner still live on this thread with `e`. An
 * owner parked in a wait would get the abort from it; one awaiting a promise
 * nothing will settle (its code waits for the callback that faulted) would
 * otherwise never end, and the spawn would wait for it forever.
 */
export function abortLiveOwners(e: Error): void {
  for (const o of [...live]) o.abort(e);
}

/** The owner of the code running now (or of the callback that just failed), if any. */
export function currentFaultOwner(): FaultOwner | undefined {
  if (current !== undefined || stopHooks !== undefined) return current;
  return soleOwner();
}

function soleOwner(): FaultOwner | undefined {
  if (live.size !== 1) return undefined;
  for (const o of live) return o;
  return undefined;
}

/** The owner of an exception that escaped to 'uncaughtException': the bound callback's that threw it, else the code's running now. */
export function ownerOfException(e: unknown): FaultOwner | undefined {
  const t = thrown;
  thrown = undefined;
  return t !== undefined && t.error === e ? t.owner : currentFaultOwner();
}

/** The owner of a promise that rejected with no handler: the owner of the code that created it. */
export function ownerOfPromise(p: Promise<unknown> | undefined): FaultOwner | undefined {
  const o = p === undefined ? undefined : (p as Tagged)[OWNER];
  if (o !== undefined) return o ?? undefined;
  // Untagged: created while the hooks were off, by the thread's only live owner then.
  return stopHooks !== undefined ? untagged : soleOwner();
}

// Promises nobody will ask the owner of. A tag is read in two places only: by
// `before`, for the promise a reaction settles (the one `then` or `await` made),
// and by ownerOfPromise, for a promise that rejected unhandled. So a promise made
// fulfilled needs none, nor does the promise of a reaction that runs engine
// bookkeeping alone. Such promises come with every tl operation that completes
// as issued (a ring step's receive, its flow's release): untagged, each saves
// the tag's property store and the backing store it allocates on the promise
// (the bytes: docs/decisions/0120-untagged-engine-promises.md).

/** Promise.resolve(value) with no owner tag. `value` must not be a thenable (the promise would then follow it, and might reject). */
export function resolvedUntagged<T>(value: T): Promise<T> {
  untaggedNext = true;
  const p = Promise.resolve(value);
  untaggedNext = false;
  return p;
}

/**
 * `void settled.then(fn)` with no owner tag on the promise `then` makes. `fn` is
 * engine bookkeeping: while it runs the code counts as the owner of untagged
 * promises (`before`), so it must not make promises, schedule callbacks, call
 * process.exit() or throw.
 */
export function thenUntagged(settled: Promise<unknown>, fn: () => void): void {
  untaggedNext = true;
  void settled.then(fn);
  untaggedNext = false;
}

/**
 * A continuation of engine code that resumes the owner of the code that made it
 * (a ring step's: lib/ccl/steps.ts), without `await`: `after(settled)` is
 * `void settled.then(fulfilled, rejected)` with no owner tag on the promise
 * `then` makes, and each reaction runs as that owner (callAs), so the promises
 * and callbacks it makes are that owner's, as after an `await` of the owner's
 * code. Made once and used for many settlements: no closure or tag a use, no
 * async frame to suspend and resume (decision 0195). The reactions must not
 * throw: the promise `then` makes would reject with nobody to ask its owner.
 */
export class OwnedContinuation {
  private readonly owner = currentFaultOwner();
  private readonly fulfilled = (): void => {
    const o = this.owner;
    if (o === undefined) this.onFulfilled();
    else o.callAs(this.onFulfilled);
  };
  private readonly rejected = (e: unknown): void => {
    const o = this.owner;
    if (o === undefined) this.onRejected(e);
    else o.callAs(() => this.onRejected(e));
  };

  constructor(
    private readonly onFulfilled: () => void,
    private readonly onRejected: (e: unknown) => void,
  ) {}

  /** Run onFulfilled now, as its owner: a turn a queue of the caller's gives it (lib/sync/step-queue.ts). */
  now(): void {
    this.fulfilled();
  }

  /** Run onFulfilled (or onRejected with the reason) once `settled` has, in the microtask its reaction queues. */
  after(settled: Promise<unknown>): void {
    untaggedNext = true;
    void settled.then(this.fulfilled, this.rejected);
    untaggedNext = false;
  }
}

/**
 * `cb`, bound to the owner of the code running now: it runs as that owner (its
 * promises are that owner's, process.exit() names it) and an exception it
 * throws is that owner's fault. `cb` itself when no owner runs now.
 */
export function bindToOwner<A extends unknown[], R>(cb: (...a: A) => R): (...a: A) => R {
  const owner = currentFaultOwner();
  if (owner === undefined || typeof cb !== 'function') return cb;
  return function bound(this: unknown, ...a: A): R {
    const prev = current;
    current = owner;
    try {
      return cb.apply(this, a);
    } catch (e) {
      thrown = { error: e, owner };
      throw e;
    } finally {
      current = prev;
    }
  };
}

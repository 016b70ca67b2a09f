// Runs on: an executor thread. Owns: what happens on this thread to an error
// that escaped every promise chain (an uncaught exception, an unhandled
// rejection) and to process.exit() — none of them may kill the thread (its
// siblings would wait for it forever) or pass unnoticed.
//
// A fault is attributed to its owner (lib/sync/fault-owner.ts):
//   owner still running   the owner fails at once with the fault as its error
//                         (a rank: rank-failed, a root cause; a kernel: the
//                         kernel fails, the host sees a KernelError); the owner
//                         then aborts the session (runRank, PeRuntime.run).
//   owner already ended,  nobody can fail in its place: the session aborts now,
//   or no owner           with the fault as the abort's report (ABORT_KIND.FAULT),
//                         and the owners still live on this thread end with an
//                         AbortError (one may await what the callback was to settle).
// Faults are wall-clock events (a timer fires when the OS says), so the run
// aborts at once instead of waiting for quiescence: see docs/spawn.md.
import { syncBuiltinESMExports } from 'node:module';
import timers from 'node:timers';
import { isMainThread } from 'node:worker_threads';
import { AbortError, KernbenchError, serializeError, type ErrorCode } from '../errors.js';
import { ABORT_KIND } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';
import { abortLiveOwners, bindToOwner, currentFaultOwner, ownerOfException, ownerOfPromise, scheduleAsOwner, timerCleared, type FaultOwner } from '../sync/fault-owner.js';
import { abortSession } from '../sync/wake.js';

/** The session this thread serves now (faults abort it); undefined between sessions. */
let current: { shared: SharedState; executor: number } | undefined;
let installed = false;

export function setFaultSession(s: { shared: SharedState; executor: number } | undefined): void {
  current = s;
}

/** Install the handlers and replace process.exit, once per executor thread (never on main: its exit is the CLI's). */
export function installFaultHandlers(): void {
  if (installed || isMainThread) return;
  installed = true;
  process.on('uncaughtException', (e) => onFault(e, 'ERR_UNCAUGHT_EXCEPTION', () => ownerOfException(e)));
  process.on('unhandledRejection', (reason, promise) => onFault(reason, 'ERR_UNHANDLED_REJECTION', () => ownerOfPromise(promise)));
  bindCallbacksToOwners();
  // In a worker, process.exit() ends the thread, and with it every rank and PE placed here.
  process.exit = function exit(code?: number | string | null): never {
    const owner = currentFaultOwner();
    throw new KernbenchError('ERR_RANK_EXIT', `${owner?.who ?? 'code on an executor thread'} called process.exit(): a rank or kernel cannot end the process, throw an error instead; got exit code ${code ?? 'none'}`);
  } as typeof process.exit;
}

/**
 * Callbacks scheduled by an owner run as that owner (lib/sync/fault-owner.ts
 * bindToOwner): setTimeout, setInterval, setImmediate, queueMicrotask and
 * process.nextTick, both the globals and node:timers' exports (an
 * `import { setTimeout } from 'node:timers'` sees the bound one too).
 */
function bindCallbacksToOwners(): void {
  type Scheduler = (cb: (...a: unknown[]) => unknown, ...rest: unknown[]) => unknown;
  const bind = (orig: Scheduler): Scheduler => {
    const f = function scheduleBound(this: unknown, cb: (...a: unknown[]) => unknown, ...rest: unknown[]): unknown {
      return orig.call(this, bindToOwner(cb), ...rest);
    };
    // util.promisify(setTimeout) and friends read this.
    Object.defineProperties(f, Object.getOwnPropertyDescriptors(orig));
    return f;
  };
  // Timers are also tracked by their owner: a rank ends once its timers have run, and
  // a timer still pending when its owner ends is cancelled (decision 0096).
  const track = (orig: Scheduler, repeats: boolean): Scheduler => {
    const f = function scheduleTracked(this: unknown, cb: (...a: unknown[]) => unknown, ...rest: unknown[]): unknown {
      return scheduleAsOwner(orig, this, cb, rest, repeats);
    };
    // util.promisify(setTimeout) and friends read this.
    Object.defineProperties(f, Object.getOwnPropertyDescriptors(orig));
    return f;
  };
  const g = globalThis as unknown as Record<string, Scheduler>;
  const t = timers as unknown as Record<string, Scheduler>;
  for (const name of ['setTimeout', 'setInterval', 'setImmediate'] as const) {
    const orig = g[name];
    const bound = track(orig, name === 'setInterval');
    g[name] = bound;
    if (t[name] === orig) t[name] = bound;
  }
  for (const name of ['clearTimeout', 'clearInterval', 'clearImmediate'] as const) {
    const orig = g[name];
    const cleared = function clearTracked(this: unknown, h: unknown): unknown {
      timerCleared(h);
      return (orig as (h: unknown) => unknown).call(this, h);
    };
    Object.defineProperties(cleared, Object.getOwnPropertyDescriptors(orig));
    g[name] = cleared as unknown as Scheduler;
    if (t[name] === orig) t[name] = cleared as unknown as Scheduler;
  }
  // queueMicrotask takes one argument: no rest array to build on every call (each
  // settled tl operation queues one, lib/kernel/flow.ts; docs/benchmarks.md, "Peak memory").
  const queue = g.queueMicrotask as (cb: () => void) => void;
  const queueBound = function queueMicrotask(cb: () => void): void {
    queue(bindToOwner(cb));
  };
  Object.defineProperties(queueBound, Object.getOwnPropertyDescriptors(queue));
  g.queueMicrotask = queueBound as unknown as Scheduler;
  const p = process as unknown as Record<string, Scheduler>;
  p.nextTick = bind(p.nextTick);
  syncBuiltinESMExports();
}

function onFault(e: unknown, code: ErrorCode, ownerOf: () => FaultOwner | undefined): void {
  try {
    const owner = ownerOf();
    const err = faultError(e, code, owner);
    if (owner?.fail(err)) return; // the owner reports it and aborts the session
    if (current) {
      abortSession(current.shared, ABORT_KIND.FAULT, serializeError(err));
      // Not the fault itself (as a waiter's abort error, lib/sync/scheduler.ts): it fails no owner as a root cause.
      abortLiveOwners(new AbortError(`${err.name} [${(err as KernbenchError).code ?? 'no code'}]: ${err.message}`));
    } else process.stderr.write(`kernbench: a fault on an executor thread between sessions: ${err.message}\n`);
  } catch (inner) {
    // The handler itself must not throw (that would end the thread): say what happened.
    process.stderr.write(`kernbench: internal: handling a fault failed: ${String(inner)}\n`);
  }
}

/** The error an owner fails with: process.exit's own error as is, anything else wrapped with its owner and code. */
function faultError(e: unknown, code: ErrorCode, owner: FaultOwner | undefined): Error {
  if (e instanceof KernbenchError && e.code === 'ERR_RANK_EXIT') return e;
  const what = code === 'ERR_UNHANDLED_REJECTION' ? 'a promise rejected and nothing handled it' : 'an exception escaped its promise chain (thrown in a timer or event callback)';
  const who = owner ? `${owner.who}${owner.live ? '' : ', after it ended,'}` : `executor thread ${current?.executor ?? '?'}, outside any rank or kernel,`;
  const got = e instanceof Error ? `${e.name}: ${e.message}` : `a non-error value: ${String(e)}`;
  return new KernbenchError(code, `${who}: ${what}: ${got}`, { cause: e, atPs: owner?.clockPs() });
}

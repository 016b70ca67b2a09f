// Runs on: executor threads. Owns: knowing which actor — a spawned rank's host
// code, or one kernel run on a PE — an error that escaped every promise chain
// belongs to (a throw in a setTimeout callback, an unhandled rejection,
// process.exit() called from a callback).
//
// An AsyncLocalStorage store follows timers, immediates and promise
// continuations, so the thread's 'uncaughtException' and 'unhandledRejection'
// handlers (lib/executor/faults.ts) read the owner of the callback that failed.
// While the owner runs, runOwned races its promise chain against such a
// fault: the owner fails at once with it, as if its chain had thrown.
import { AsyncLocalStorage } from 'node:async_hooks';

export class FaultOwner {
  /** True until the owner's chain settles (returned, threw, or faulted). */
  live = true;
  /** The fault that failed the owner, if one did (set by fail()). */
  faulted: Error | undefined;
  private reject: ((e: Error) => void) | undefined;

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

  /** Run `fn` as this owner: its outcome, or the fault that failed it while it ran, whichever comes first. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const faulted = new Promise<never>((_, reject) => (this.reject = reject));
    try {
      return await Promise.race([store.run(this, fn), faulted]);
    } finally {
      this.live = false;
    }
  }
}

const store = new AsyncLocalStorage<FaultOwner>();

/** The owner of the code running now (or of the callback that just failed), if any. */
export function currentFaultOwner(): FaultOwner | undefined {
  return store.getStore();
}

// Runs on: main. Owns: stopping a run that does not end by itself — at its
// timeout (run --timeout, withTorch's `timeout`) or on an interrupt (SIGINT,
// wired by the CLI) — with a report of what every actor was doing, read from
// the open session's shared actor table (lib/coordinator/actor-states.ts);
// then its threads are terminated (decision 0095).
//
// Main's timers do not fire while main itself is stuck in a synchronous loop of
// user code. With `interruptMain` (the CLI), the timeout is kept by a thread of
// its own (./watchdog-thread.ts), which can end such a loop; without it (the
// library: the user's own main-thread code is theirs), a main-thread timer keeps it.
import { Worker } from 'node:worker_threads';
import { RunStoppedError, type ActorStateReport } from '../errors.js';
import { actorStates } from '../coordinator/actor-states.js';
import { modulesLoading } from '../loader/user-module.js';
import { Machine } from '../topology/machine.js';
import type { ThreadResources } from './thread-resources.js';
import { WATCH } from './watchdog-thread.js';

const WATCHDOG_FILE = new URL('./watchdog-thread.js', import.meta.url);

export interface WatchdogOptions {
  /** Seconds the run may take (none: no timeout). */
  timeoutS?: number;
  /** Keep the timeout on a thread of its own that can end a synchronous loop on main (the CLI). */
  interruptMain?: boolean;
}

export class Watchdog {
  /** Rejects with the RunStoppedError once the run is stopped; never resolves. */
  readonly stopped: Promise<never>;
  /** The error the run stopped with, once it did. */
  error: RunStoppedError | undefined;
  private reject!: (e: Error) => void;
  private timer: NodeJS.Timeout | undefined;
  private thread: Worker | undefined;
  private readonly flags = new Int32Array(new SharedArrayBuffer(WATCH.WORDS * 4));

  constructor(
    private readonly resources: ThreadResources,
    opts: WatchdogOptions,
  ) {
    this.stopped = new Promise<never>((_, reject) => (this.reject = reject));
    this.stopped.catch(() => undefined); // observed by whoever races it; never an unhandled rejection
    const s = opts.timeoutS;
    if (s === undefined) return;
    const why = `the run took longer than its timeout of ${s} s`;
    if (opts.interruptMain === true) {
      this.thread = new Worker(WATCHDOG_FILE, { workerData: { watchdog: true, flags: this.flags.buffer, timeoutMs: s * 1000 } });
      this.thread.unref();
      this.thread.on('message', () => {
        Atomics.add(this.flags, WATCH.HEARD, 1);
        Atomics.notify(this.flags, WATCH.HEARD);
        this.stop('ERR_TIMEOUT', why);
      });
    } else {
      this.timer = setTimeout(() => this.stop('ERR_TIMEOUT', why), s * 1000);
      this.timer.unref();
    }
  }

  /** Stop the run now: build the report from the open session (if any) and reject `stopped`. Once; later calls do nothing. */
  stop(code: 'ERR_TIMEOUT' | 'ERR_INTERRUPTED', why: string): void {
    if (this.error !== undefined) return;
    const { summary, actors } = this.report();
    this.error = new RunStoppedError(code, `stopped: ${why}`, summary, actors);
    this.reject(this.error);
  }

  /** The run ended (or was stopped and reported): no timeout fires after this. */
  dispose(): void {
    clearTimeout(this.timer);
    Atomics.add(this.flags, WATCH.ENDED, 1);
    Atomics.notify(this.flags, WATCH.ENDED);
    this.thread = undefined;
  }

  private report(): { summary: string[]; actors: ActorStateReport[] } {
    const open = this.resources.open;
    if (open !== undefined) return actorStates(open.shared, new Machine(open.plan.topology));
    // No session open: main itself is where the run is (loading the bench, or its own code).
    const loading = modulesLoading();
    const doing = loading.length > 0 ? `is importing ${loading.join(', ')} (its top-level code has not finished)` : 'is running the bench\'s own code (no session open)';
    const line = `main host ${doing}`;
    return { summary: ['1 actor running:', `  ${line}`, 'no actor waits'], actors: [{ actor: -1, who: 'main host', state: 'running', atPs: 0, line }] };
  }
}

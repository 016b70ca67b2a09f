// Runs on: main (tests). Shared plumbing for tests that run real sessions: the
// process's shared threads (./threads.ts: reused across the sessions of every file
// of a group, as in a sweep, one run at a time), or a file's own ThreadResources
// when it asks for thread options, and a RunConfig built from a few overrides.
import type { RunConfig } from '../../lib/bench/contract.js';
import { runBench, withSession } from '../../lib/bench/runner.js';
import type { Torch } from '../../lib/host/torch.js';
import type { Session } from '../../lib/session/session.js';
import { ThreadResources } from '../../lib/session/thread-resources.js';
import { exclusive, sharedThreads } from './threads.js';

export const FIXTURES = new URL('../fixtures/kernels.js', import.meta.url).href;

export function config(over: Partial<RunConfig> = {}): RunConfig {
  return { topology: 'default', ccl: 'default', threads: 'rank', sets: [], algorithm: undefined, dtype: undefined, jitterSeed: null, ...over };
}

export interface TestRuntimeOptions {
  /** More module URLs whose exports spawn may run, registered after the fixtures (test/fixtures/kernels.js). */
  modules?: string[];
  /** Young-generation collections when idle after a kernel epoch (lib/sync/young-gc.ts); default: KERNBENCH_EPOCH_GC. */
  epochGc?: boolean;
  /** The coordinator's pass interval when nothing rings it (ThreadResources). */
  coordinatorTimerMs?: number;
  /** Each executor thread's heap limit in MB (ThreadResources). */
  executorHeapMb?: number;
}

export class TestRuntime {
  /** Threads of this runtime alone (thread options given), or undefined: the process's shared threads. */
  private readonly own: ThreadResources | undefined;
  private readonly modules: string[];

  constructor(opts: TestRuntimeOptions = {}) {
    const options = opts.epochGc !== undefined || opts.coordinatorTimerMs !== undefined || opts.executorHeapMb !== undefined;
    this.own = options
      ? new ThreadResources({ epochGc: opts.epochGc, coordinatorTimerMs: opts.coordinatorTimerMs, executorHeapMb: opts.executorHeapMb })
      : undefined;
    this.modules = [FIXTURES, ...(opts.modules ?? [])];
  }

  /** The threads this runtime's runs use. */
  get resources(): ThreadResources {
    return this.own ?? sharedThreads();
  }

  /** Run a bench in-process; returns its whole outcome (results, statistics). */
  run(name: string, over: Partial<RunConfig> = {}) {
    return this.queued(() => runBench(this.resources, name, config(over), () => undefined));
  }

  /** Run a bench in-process; returns its results with digests. */
  async bench(name: string, over: Partial<RunConfig> = {}) {
    return (await this.run(name, over)).results;
  }

  /** Open a session (the fixtures and `modules` registered for spawn), run fn, end it. */
  session<T>(over: Partial<RunConfig>, fn: (torch: Torch, s: Session) => Promise<T>) {
    return this.queued(() => withSession(this.resources, config(over), this.modules, fn));
  }

  /** Stops this runtime's own threads; the shared ones stop when the process's tests end. */
  close(): Promise<void> {
    return this.own?.close() ?? Promise.resolve();
  }

  /** Runs on shared threads wait for each other (./threads.ts); a runtime's own threads run its runs as they come. */
  private queued<T>(fn: () => Promise<T>): Promise<T> {
    return this.own ? fn() : exclusive(fn);
  }
}

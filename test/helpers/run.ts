// Runs on: main (tests). Shared plumbing for tests that run real sessions:
// one ThreadResources per test file (threads reused across its sessions, as in
// a sweep), and a RunConfig built from a few overrides.
import type { RunConfig } from '../../lib/bench/contract.js';
import { runBench, withSession } from '../../lib/bench/runner.js';
import type { Torch } from '../../lib/host/torch.js';
import type { Session } from '../../lib/session/session.js';
import { ThreadResources } from '../../lib/session/thread-resources.js';

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
  readonly resources: ThreadResources;
  private readonly modules: string[];

  constructor(opts: TestRuntimeOptions = {}) {
    this.resources = new ThreadResources({ epochGc: opts.epochGc, coordinatorTimerMs: opts.coordinatorTimerMs, executorHeapMb: opts.executorHeapMb });
    this.modules = [FIXTURES, ...(opts.modules ?? [])];
  }

  /** Run a bench in-process; returns its results with digests. */
  async bench(name: string, over: Partial<RunConfig> = {}) {
    const out = await runBench(this.resources, name, config(over), () => undefined);
    return out.results;
  }

  /** Open a session (the fixtures and `modules` registered for spawn), run fn, end it. */
  session<T>(over: Partial<RunConfig>, fn: (torch: Torch, s: Session) => Promise<T>) {
    return withSession(this.resources, config(over), this.modules, fn);
  }

  close(): Promise<void> {
    return this.resources.close();
  }
}

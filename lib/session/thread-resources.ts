// Runs on: main. Owns: the process-wide thread resources — the piscina
// executor pool and the coordinator thread — which every session of the
// process reuses (across launches, sweep points and sessions), and their
// shutdown. A session (./session.ts) borrows them.
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { enableYoungGc, epochGcFromEnv } from '../sync/young-gc.js';
import type { ToCoordinator } from '../sync/messages.js';
import { setConcurrentCompile, setOldSpaceFloor, setSemiSpace, setTiering, threadEnv, threadExecArgv } from './thread-flags.js';
import type { SharedState } from '../shm/shared-state.js';
import type { SessionPlan } from '../config/plan.js';

const EXECUTOR_FILE = new URL('../executor/executor-worker.js', import.meta.url).href;

/** Present on Node versions that have require(esm) (20.19+, 22.12+); older ones reject the flag. */
const REQUIRE_ESM_OFF = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module') ? ['--no-experimental-require-module'] : [];

const COORDINATOR_FILE = new URL('../coordinator/coordinator-worker.js', import.meta.url);

/**
 * Executor threads a process starts before a run says, as a note, what they cost
 * (decision 0130): each thread is an isolate of its own that loads and compiles
 * the runtime again, so above this many the start-up outweighs what one thread
 * per rank gains, and a few threads (`--threads N`) finish sooner. The layout
 * stays the user's choice: this is a note, never an error.
 */
export const MANY_THREADS = 64;

/** The note for a pool of `threads` executors, or undefined up to MANY_THREADS. */
export function manyThreadsNote(threads: number): string | undefined {
  if (threads <= MANY_THREADS) return undefined;
  return `note: this run starts ${threads} executor threads (one a rank under --threads rank, the default); each loads the runtime into its own isolate, so above ${MANY_THREADS} their start-up outweighs the run: --threads 2 (or one a core) is faster here (docs/decisions/0130-thread-per-rank-up-to-64.md)`;
}

/** The threads of this process: reused across launches, sweep points and sessions. */
export class ThreadResources {
  private pool: Piscina | undefined;
  private poolSize = 0;
  private coordinator: Worker | undefined;
  /** Whether executors collect their young generation when idle after a kernel epoch (./young-gc.ts). */
  readonly epochGc: boolean;
  /**
   * The coordinator's pass interval when nothing rings it (ms; default 20): how late a
   * deadlock is reported at most. Arbiter passes never wait for it (they are rung), so a
   * test may stretch it to show that no grant does (test/memory-channels.test.ts).
   */
  readonly coordinatorTimerMs: number | undefined;
  /**
   * Each executor thread's JavaScript heap limit (MB; V8's old generation, Worker
   * resourceLimits.maxOldGenerationSizeMb); default: V8's. A small one lets a test run a
   * kernel out of memory quickly (test/executor-heap.test.ts).
   */
  readonly executorHeapMb: number | undefined;
  /** The session open on these threads, if any: what a stopped run's report reads (./watchdog.ts). Set by Session. */
  open: { readonly shared: SharedState; readonly plan: SessionPlan } | undefined;
  /** Told the note of manyThreadsNote when a pool above MANY_THREADS starts (the CLI writes it to stderr). */
  private readonly onNote: ((line: string) => void) | undefined;

  constructor(opts: { epochGc?: boolean; coordinatorTimerMs?: number; executorHeapMb?: number; onNote?: (line: string) => void } = {}) {
    // Before any of our threads exists: the threads created afterwards get V8's gc.
    this.epochGc = (opts.epochGc ?? epochGcFromEnv()) && enableYoungGc();
    this.coordinatorTimerMs = opts.coordinatorTimerMs;
    this.executorHeapMb = opts.executorHeapMb;
    this.onNote = opts.onNote;
  }

  /** The pool of `n` executors; started (if it does not run yet) for a session of `ranks` ranks, which sizes its heaps (./thread-flags.ts). */
  executorPool(n: number, ranks = 0): Piscina {
    // Each session, whatever the pool's size: TurboFan's threshold for the n isolates it runs on (decision 0238).
    setTiering(n);
    if (!this.pool || this.poolSize < n) {
      void this.pool?.destroy();
      const note = manyThreadsNote(n);
      if (note !== undefined) this.onNote?.(note);
      // piscina loads its task file with require() first; on Node 20.19+ that loads our ES modules
      // through require(esm), and a later import() of the same graph (kernels, benches) can trip
      // Node's "module imported again after being required" assertion (seen intermittently when the
      // pool grew). Turning require(esm) off in the pool makes piscina fall back to import().
      // Before the pool's isolates start: a full-collection floor for few of them (decision 0215), smaller nurseries for many (decision 0232), neither for a large session (decision 0246),
      // and a large session on more threads than cores optimises on its own threads (decision 0247).
      setOldSpaceFloor(n, ranks);
      setSemiSpace(n, ranks);
      setConcurrentCompile(n, ranks);
      this.pool = new Piscina({ filename: EXECUTOR_FILE, minThreads: n, maxThreads: n, concurrentTasksPerWorker: 1, idleTimeout: 60_000, execArgv: [...threadExecArgv(), ...REQUIRE_ESM_OFF], env: threadEnv(), ...(this.executorHeapMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: this.executorHeapMb } }) });
      this.poolSize = n;
    }
    return this.pool;
  }

  coordinatorThread(): Worker {
    if (!this.coordinator) {
      this.coordinator = new Worker(COORDINATOR_FILE, { execArgv: threadExecArgv(), env: threadEnv() });
      this.coordinator.unref();
    }
    return this.coordinator;
  }

  /**
   * Stop every thread now, busy or not (a stopped run: ./watchdog.ts). Worker.terminate
   * interrupts a thread in the middle of a synchronous loop; the open session is dropped.
   */
  async terminate(): Promise<void> {
    this.open = undefined;
    const pool = this.pool;
    this.pool = undefined;
    this.poolSize = 0;
    const coord = this.coordinator;
    this.coordinator = undefined;
    await Promise.allSettled([coord?.terminate(), pool?.destroy()]);
  }

  /** Stop every thread: the process can then exit by itself. */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    this.poolSize = 0;
    const coord = this.coordinator;
    this.coordinator = undefined;
    if (coord) {
      // Ask it to leave (it closes its port and exits by itself); terminate only if it does not.
      const exited = new Promise<void>((r) => coord.once('exit', () => r()));
      coord.postMessage({ type: 'shutdown' } satisfies ToCoordinator);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), 1000)));
      if ((await Promise.race([exited, late])) === 'late') await coord.terminate();
      clearTimeout(timer);
    }
    if (pool) await pool.destroy();
  }
}

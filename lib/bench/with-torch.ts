// Runs on: main. Owns: running kernbench from a user's own script, without the
// CLI — the library form of `kernbench run`: open one session on fresh threads,
// hand its torch to a callback, end the session, stop the threads.
//
//   import { withTorch } from 'kernbench';
//   export async function worker(rank: number, torch: Torch) { ... }
//   const run = await withTorch({ topology: 'ideal', modules: [import.meta.url] },
//     (torch) => torch.multiprocessing.spawn(worker, { nprocs: 2 }));
//   run.value  // what the callback returned; run.digest: the session's digest
// Spawned ranks import `modules` on their own threads, so a module listed there
// must not call withTorch at its top level (put the script's top-level work in
// another file, as with Python's `if __name__ == '__main__'`).
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread, threadId } from 'node:worker_threads';
import { z } from 'zod';
import { DEFAULT_TOPOLOGY } from '../config/paths.js';
import { KernbenchError, RunStoppedError } from '../errors.js';
import { Watchdog } from '../session/watchdog.js';
import type { Torch } from '../host/torch.js';
import { ThreadResources } from '../session/thread-resources.js';
import { DEFAULT_THREADS } from '../config/plan.js';
import type { RunConfig, SessionRun } from './contract.js';
import { withSession } from './runner.js';
import { sourceUrl } from '../loader/user-module.js';

const TorchOptionsSchema = z.strictObject({
  /** Modules whose exported functions spawn may run: file URLs (`import.meta.url`) or paths (relative to the working directory). */
  modules: z.array(z.string()).default([]),
  /** A shipped topology's name (`ideal`) or a topology file's path. */
  topology: z.string().default(DEFAULT_TOPOLOGY),
  /** A CCL file's path; 'default' is the shipped topologies/ccl.yaml. */
  ccl: z.string().default('default'),
  /** An algorithm entry of the CCL file (default: its defaults.algorithm). */
  algorithm: z.string().optional(),
  /** Thread layout, as --threads: 'rank', 'pe', or a number of executors (1 is the reference). */
  threads: z.union([z.literal('rank'), z.literal('pe'), z.number().int().positive()]).default(DEFAULT_THREADS),
  /** Overrides as --set: 'system.sips.count=4', 'ccl.n_slots=1'. */
  sets: z.array(z.string()).default([]),
  /** Seed of injected scheduling jitter (results must not change), or null for none. */
  jitterSeed: z.number().int().nullable().default(null),
  /** Timing only: kernels move and compute no data. */
  noData: z.boolean().default(false),
  /** Check for data races (--check-races): the run fails with ERR_DATA_RACE if two actors touched the same bytes unordered. */
  checkRaces: z.boolean().default(false),
  /** Write a Chrome trace of the session to this file. */
  trace: z.string().optional(),
  /**
   * Seconds the run may take (as run --timeout): past them withTorch rejects with
   * ERR_TIMEOUT, a RunStoppedError naming what every actor was doing, and its threads are
   * terminated. Kept by a main-thread timer: a synchronous loop in the caller's own
   * main-thread code is not interrupted (the CLI's is). Default: none.
   */
  timeout: z.number().positive().optional(),
  /** Stops the run when aborted (the library's Ctrl-C): withTorch rejects with ERR_INTERRUPTED and the same report. */
  signal: z.instanceof(AbortSignal).optional(),
  /** The virtual-time limit in ns (as run --max-virtual-time): a PE clock past it rejects with ERR_VIRTUAL_TIME_LIMIT. Default: none. */
  maxVirtualTimeNs: z.number().positive().optional(),
});

/** Options of withTorch: every field optional, each with the CLI's default. */
export type TorchOptions = z.input<typeof TorchOptionsSchema>;

/**
 * Open a session, run `fn` with its torch (the main host), end the session and
 * stop its threads. Resolves with what `fn` returned, the session's report and
 * its digest; rejects with what `fn` threw (the threads are stopped either way).
 */
export async function withTorch<T>(options: TorchOptions, fn: (torch: Torch) => Promise<T>): Promise<SessionRun<T>> {
  // Spawned ranks import the module that exports their function: if that module runs
  // withTorch at its top level, each rank would open a session of its own and hang.
  if (!isMainThread) throw new KernbenchError('ERR_MAIN_THREAD_ONLY', `withTorch runs on the main thread only: a module imported by a spawned rank called it at its top level; export spawn targets from a module without top-level work, got a call on thread ${threadId}`);
  const parsed = TorchOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ');
    throw new KernbenchError('ERR_INVALID_OPTIONS', `withTorch: bad options: ${problems}, got ${JSON.stringify(options)}`);
  }
  const { modules, timeout, maxVirtualTimeNs, signal, ...rest } = parsed.data;
  const config: RunConfig = { ...rest, algorithm: rest.algorithm, dtype: undefined, ...(maxVirtualTimeNs !== undefined ? { maxVirtualTimePs: Math.round(maxVirtualTimeNs * 1000) } : {}) };
  // A TypeScript user names workers.ts as './workers.js', as their imports do (sourceUrl).
  const urls = modules.map((m) => sourceUrl(m.startsWith('file:') ? m : pathToFileURL(isAbsolute(m) ? m : resolve(m)).href));
  const resources = new ThreadResources();
  const watchdog = new Watchdog(resources, { timeoutS: timeout });
  const interrupted = (): void => watchdog.stop('ERR_INTERRUPTED', 'interrupted (its AbortSignal was aborted)');
  if (signal?.aborted === true) interrupted();
  signal?.addEventListener('abort', interrupted);
  try {
    const run = withSession(resources, config, urls, (torch) => fn(torch));
    run.catch(() => undefined); // a stopped run's own end is not waited for
    return await Promise.race([run, watchdog.stopped]);
  } catch (e) {
    // Its threads may be busy forever (a kernel in a loop): ended, not joined.
    if (e instanceof RunStoppedError) await resources.terminate();
    throw e;
  } finally {
    signal?.removeEventListener('abort', interrupted);
    watchdog.dispose();
    await resources.close();
  }
}

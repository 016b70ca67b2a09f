// Runs on: main thread (tap). Owns: the one set of threads (executor pool and
// coordinator) that the test files of a tap process share — TestRuntime's runs
// (./run.ts) and the in-process CLI runs (./cli.ts) — and the queue that puts one
// run at a time on them (decision 0140).
//
// Starting an executor thread costs about half a second of CPU (it loads the
// library), and a group (decision 0028) imports several files: with a set of
// threads per file, each file started its own pool again (32 executors for one
// --threads pe run on the default machine). Shared, a process starts the largest
// pool it needs once; the pool only grows (ThreadResources.executorPool).
//
// One run at a time: a session owns the threads while it runs, and two files of a
// group may both be running (a later file's import-time run while an earlier
// file's tests run). Never start a queued run from inside another one's callback:
// it would wait for itself.
import t from 'tap';
import { actorStates } from '../../lib/coordinator/actor-states.js';
import { ThreadResources } from '../../lib/session/thread-resources.js';
import { Machine } from '../../lib/topology/machine.js';
import { reservedExecutors } from './reserve.js';

let shared: ThreadResources | undefined;
let closed = false;
t.teardown(async () => {
  const reserved = reservedExecutors();
  if (reserved > 0 && largest !== reserved) {
    process.stderr.write(`# the group reserved ${reserved} executors (reserveExecutors), its largest run needed ${largest}: set the reserve to ${largest}\n`);
    process.exitCode = 1;
  }
  const closing = shared;
  if (closing === undefined) return;
  closed = true;
  // The process exits once these threads have stopped; if they do not, tap times the
  // file out after its tests all passed. Say what is still alive meanwhile.
  const slow = setTimeout(() => process.stderr.write(`# the shared threads have not stopped 10 s after the tests ended; alive: ${process.getActiveResourcesInfo().join(', ')}\n`), 10_000);
  slow.unref();
  await closing.close();
  clearTimeout(slow);
});

// A run that never ends fails its test at tap's timeout, and tap kills the process
// right after. Before it does, say what every actor of the open session was doing
// (the watchdog's report, decision 0095), or, with no session open, what keeps the
// process alive, so that a hang seen once in CI can be read. Printed once.
// Synchronous: stderr is a pipe under tap, written at once on Linux.
let reported = false;
function reportAtTimeout(): void {
  if (reported) return;
  reported = true;
  const open = shared?.open;
  if (open === undefined) {
    process.stderr.write(`# no kernbench run was open at tap's timeout; shared threads ${shared === undefined ? 'none' : closed ? 'closed' : 'open'}; alive: ${process.getActiveResourcesInfo().join(', ')}\n`);
    return;
  }
  const { summary, actors } = actorStates(open.shared, new Machine(open.plan.topology));
  const lines = [...summary, ...actors.slice(0, 64).map((a) => a.line)];
  process.stderr.write(`# a kernbench run was open at tap's timeout; its actors:\n${lines.map((l) => `#   ${l}\n`).join('')}`);
}
t.on('timeout', reportAtTimeout);
// After a file's tests have ended, tap sends the process SIGALRM instead: say it, then
// let tap's own handler (signal-exit's, which acts only when it is the last listener) go on.
const onAlarm = (): void => {
  reportAtTimeout();
  process.removeListener('SIGALRM', onAlarm);
  process.kill(process.pid, 'SIGALRM');
};
process.on('SIGALRM', onAlarm);

/** The most executors any run on the shared threads asked for (checked against the reserve at the end). */
let largest = 0;

/** The process's shared threads, started on first use (again after dropSharedThreads). */
export function sharedThreads(): ThreadResources {
  if (shared !== undefined) return shared;
  const resources = new ThreadResources();
  const grow = resources.executorPool.bind(resources);
  resources.executorPool = (n: number, ranks?: number) => {
    largest = Math.max(largest, n);
    return grow(n, ranks);
  };
  if (reservedExecutors() > 0) grow(reservedExecutors());
  return (shared = resources);
}

/** Stop the shared threads after a run that did not answer: the next run gets a fresh set. */
export function dropSharedThreads(resources: ThreadResources): void {
  if (shared === resources) shared = undefined;
  void resources.close();
}

let queue: Promise<unknown> = Promise.resolve();

/** Run `fn` when every run queued before it has ended; its result or rejection is the caller's. */
export function exclusive<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(fn);
  queue = run.catch(() => undefined);
  return run;
}

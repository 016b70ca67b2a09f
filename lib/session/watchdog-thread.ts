// Runs on: its own thread (one per watched run, started by ./watchdog.ts; it
// holds no session). Owns: noticing that a run's timeout has passed even when
// the main thread is stuck in a synchronous loop of user code (an endless
// loop at import, in a bench's own code), where main's own timers never fire.
//
// The words of `flags` (Int32Array over a SharedArrayBuffer, both only go up):
//   ENDED  bumped by main when the run ended: the watch is over
//   HEARD  bumped by main when it handled this thread's `timeout` message
// At the timeout it posts `timeout` to main. If main does not answer within
// MAIN_ANSWER_MS, main is busy in a loop: the thread asks main's inspector to
// terminate the running JavaScript (Runtime.terminateExecution), after which
// main's event loop goes on and handles the message (decision 0095).
import { Session } from 'node:inspector';
import { parentPort, workerData } from 'node:worker_threads';

export const WATCH = { ENDED: 0, HEARD: 1, WORDS: 2 } as const;

/** How long main may take to handle the timeout before it is taken to be stuck (a loaded machine delays a thread by a slice or two). */
const MAIN_ANSWER_MS = 500;

if (parentPort !== null && workerData !== null && typeof workerData === 'object' && 'watchdog' in workerData) {
  const { flags, timeoutMs } = workerData as { watchdog: true; flags: SharedArrayBuffer; timeoutMs: number };
  const words = new Int32Array(flags);
  if (Atomics.wait(words, WATCH.ENDED, 0, timeoutMs) === 'timed-out') {
    parentPort.postMessage('timeout');
    if (Atomics.wait(words, WATCH.HEARD, 0, MAIN_ANSWER_MS) === 'timed-out' && Atomics.load(words, WATCH.ENDED) === 0) {
      const inspector = new Session();
      inspector.connectToMainThread();
      inspector.post('Runtime.terminateExecution', () => inspector.disconnect());
    }
  }
}

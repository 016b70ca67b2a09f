// Runs on: main. Owns: giving main's idle heap back to the system while main
// waits for a large spawn's ranks (decision 0225).
//
// Main does its heavy allocating before the ranks start (modules, the session
// plan of every SIP, the spawn's messages) and V8 sizes its young generation by
// how much of that survives, large by the time a large spawn begins (figures:
// decision 0225). Main then only waits; it allocates too little to run another
// collection, so nothing shrinks that young generation until V8's memory
// reducer happens to run, after most of the run: its pages stay resident for
// the whole run. A low-memory collection (the inspector's
// HeapProfiler.collectGarbage, i.e. V8's LowMemoryNotification, the same one
// the memory reducer runs) shrinks the young generation and compacts the old
// one. It costs one full collection of main's small heap, so only a spawn of
// RELEASE_FROM_RANKS ranks or more, which runs for seconds, asks for it.
import { Session } from 'node:inspector';

/** The spawn size from which main gives its heap back while it waits: a spawn this large runs for seconds, a test's few ranks for milliseconds. */
export const RELEASE_FROM_RANKS = 256;

/** The last collection asked for: settles when it is done (tests wait for it; the session does not). */
export let lastIdleRelease: Promise<void> = Promise.resolve();

/** Before main waits for `nprocs` ranks: a low-memory collection of main's heap when the spawn is large. Never throws. */
export function releaseIdleHeap(nprocs: number): void {
  if (nprocs < RELEASE_FROM_RANKS || !process.features.inspector) return;
  lastIdleRelease = new Promise<void>((resolve) => {
    try {
      const inspector = new Session();
      inspector.connect();
      // Disconnected on a later turn: from inside this callback V8's inspector
      // deadlocks (its heap agent's teardown waits for a lock the callback holds).
      inspector.post('HeapProfiler.collectGarbage', () =>
        setImmediate(() => {
          inspector.disconnect();
          resolve();
        }),
      );
    } catch {
      resolve(); // no inspector in this process after all: the heap stays as it is
    }
  });
}

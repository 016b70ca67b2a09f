// Runs on: any thread. Owns: waking every thread of a session at once (abort,
// deadlock, session end), so parked waiters re-check the abort word.
import { EXEC } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';

export function wakeAllThreads(sh: SharedState): void {
  const L = sh.layout;
  for (let e = 0; e <= L.dims.executors; e++) {
    const db = L.exec(e, EXEC.DOORBELL);
    Atomics.add(sh.ctl, db, 1);
    Atomics.notify(sh.ctl, db);
  }
}

// Runs on: any thread of a test that hands words back and forth with a Worker
// (test/arbiter-race.test.ts, test/abort-claim.test.ts and their fixtures): the
// Worker's side of a session's buffers, and waiting for a handshake word.
import { parentPort, workerData } from 'node:worker_threads';
import type { LayoutDims } from '../../lib/shm/layout.js';
import { SharedState, type SharedBuffers } from '../../lib/shm/shared-state.js';

/** What a fixture's Worker is given: the session's buffers and the handshake words' buffer, and its own fields. */
export interface SessionWorkerData {
  dims: LayoutDims;
  buffers: SharedBuffers;
  handshake: SharedArrayBuffer;
}

/** In a fixture's Worker: its data, the session attached, the handshake words and the port to say it stopped; undefined on any other thread. */
export function sessionWorker<T extends SessionWorkerData = SessionWorkerData>(): { data: T; sh: SharedState; hs: Int32Array; stopped: () => void } | undefined {
  const port = parentPort;
  if (!port || !workerData) return undefined;
  const data = workerData as T;
  return { data, sh: SharedState.attach(data.dims, data.buffers), hs: new Int32Array(data.handshake), stopped: () => port.postMessage('stopped') };
}

/**
 * Until `a[i]` reaches `target` or goes negative: spinning a while (the other side is
 * on another core, and a sleep and wake-up per cycle would make cycles rare), then
 * asleep on the word (a busy machine: the other side may need this core).
 */
export function awaitWord(a: Int32Array, i: number, target: number): void {
  for (let spin = 0; spin < 20_000; spin++) {
    const v = Atomics.load(a, i);
    if (v >= target || v < 0) return;
  }
  for (let v; (v = Atomics.load(a, i)) < target && v >= 0; ) Atomics.wait(a, i, v, 1);
}

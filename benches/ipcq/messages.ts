// Runs on: any thread (types only). Owns: the closed table of messages between
// the ipcq_throughput bench (main) and its two worker threads. Messages are
// setup and results only: the IPCQ measurement itself is Atomics on the ring's
// SharedArrayBuffers; the postMessage measurement is a MessagePort between the
// two workers, not through main.
import type { MessagePort } from 'node:worker_threads';
import type { SerializedError } from '../../lib/errors.js';
import type { LayoutDims } from '../../lib/shm/layout.js';
import type { SharedBuffers } from '../../lib/shm/shared-state.js';

/** One timed run of `count` messages of `size` bytes, with sequence numbers base .. base + count - 1. */
export interface RunSpec {
  base: number;
  count: number;
  size: number;
}

/** Where a worker's payload lives in the session arena (byte offset); src for producers, dst for consumers. */
export interface RingAttach {
  dims: LayoutDims;
  buffers: SharedBuffers;
  ring: number;
  sender: number;
  receiver: number;
  arenaOffset: number;
}

/** main -> bench worker. */
export type ToBenchWorker =
  | ({ type: 'attach-ring' } & RingAttach)
  | { type: 'attach-port'; port: MessagePort }
  | ({ type: 'ipcq-produce'; spin: number } & RunSpec)
  /** freeEvery: publish head after this many slots read (1 = per slot), or sooner when the ring is drained. */
  | ({ type: 'ipcq-consume'; spin: number; freeEvery: number } & RunSpec)
  /** window: messages in flight before the producer waits for an acknowledgement. */
  | ({ type: 'post-produce'; window: number } & RunSpec)
  | ({ type: 'post-consume'; ackEvery: number } & RunSpec);

/** bench worker -> main. Times are process.hrtime (one monotonic clock for all threads), in ns. */
export type FromBenchWorker =
  | { type: 'attached' }
  /** The postMessage consumer listens: the producer may start. */
  | { type: 'armed' }
  | { type: 'run-done'; startNs: number; endNs: number; corrupt: number; parks: number }
  | { type: 'failed'; error: SerializedError };

export function unreachable(x: never): never {
  throw new Error(`unhandled bench worker message ${JSON.stringify(x)}`);
}

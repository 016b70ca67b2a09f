// Runs on: main (bareRing) and its own worker threads (the same file, started
// as a worker). Owns: the floor of what one thread per rank can reach on this
// machine — the ring all-reduce's dependency shape with no simulation at all.
//
// p threads; in step k = 1..S each thread stores k into its successor's word,
// notifies it, then waits (Atomics.waitAsync, as the executors do) until its
// predecessor has stored k. That is one cross-thread wake per message and
// nothing else: no kernel, no IPCQ, no virtual time. bench sim_throughput
// compares --threads rank against it.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { threadExecArgv } from '../../lib/session/thread-flags.js';

interface BareRingInit {
  sab: SharedArrayBuffer;
  index: number;
  p: number;
  steps: number;
}

/** Words per thread (one cache line each, so neighbours do not share one). */
const STRIDE = 16;

/** Run the bare ring on p threads for `steps` steps; wall ms from the start signal to the last thread's end. */
export async function bareRing(p: number, steps: number): Promise<number> {
  return (await bareRingRun(p, steps)).ringMs;
}

/**
 * The bare ring, with its threads' start-up timed too: `startMs` from the first
 * Worker created to the last one ready, `ringMs` from the start signal to the
 * last thread's end (./bare-start.ts, the floor of a whole run).
 */
export async function bareRingRun(p: number, steps: number): Promise<{ startMs: number; ringMs: number }> {
  const sab = new SharedArrayBuffer(4 * STRIDE * (p + 1));
  const ctl = new Int32Array(sab);
  const go = p * STRIDE;
  const workers: Worker[] = [];
  try {
    const created = performance.now();
    const ready: Promise<void>[] = [];
    const done: Promise<number>[] = [];
    for (let index = 0; index < p; index++) {
      const w = new Worker(new URL(import.meta.url), { workerData: { sab, index, p, steps } satisfies BareRingInit, execArgv: threadExecArgv() });
      workers.push(w);
      const replies = new Promise<number>((resolve, reject) => {
        w.on('error', reject);
        w.on('exit', (code) => reject(new Error(`bare ring thread ${index} exited early, got exit code ${code}`)));
        w.on('message', (m: { type: 'ready' } | { type: 'done'; at: number }) => {
          if (m.type === 'done') resolve(m.at);
        });
      });
      ready.push(new Promise<void>((resolve) => w.once('message', () => resolve())));
      done.push(replies);
    }
    await Promise.all(ready);
    const startMs = performance.now() - created;
    const t0 = performance.timeOrigin + performance.now();
    Atomics.store(ctl, go, 1);
    Atomics.notify(ctl, go);
    const ends = await Promise.all(done);
    return { startMs, ringMs: Math.max(...ends) - t0 };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

async function thread({ sab, index, p, steps }: BareRingInit): Promise<void> {
  const ctl = new Int32Array(sab);
  const go = p * STRIDE;
  const mine = index * STRIDE;
  const next = ((index + 1) % p) * STRIDE;
  // A pending waitAsync does not keep a thread's event loop alive; this does, until main terminates the thread.
  setInterval(() => undefined, 1 << 30);
  parentPort!.postMessage({ type: 'ready' });
  while (Atomics.load(ctl, go) === 0) {
    const r = Atomics.waitAsync(ctl, go, 0);
    if (r.async) await r.value;
  }
  for (let k = 1; k <= steps; k++) {
    Atomics.store(ctl, next, k);
    Atomics.notify(ctl, next);
    let v: number;
    while ((v = Atomics.load(ctl, mine)) < k) {
      const r = Atomics.waitAsync(ctl, mine, v);
      if (r.async) await r.value;
    }
  }
  parentPort!.postMessage({ type: 'done', at: performance.timeOrigin + performance.now() });
}

if (!isMainThread && (workerData as Partial<BareRingInit> | null)?.sab instanceof SharedArrayBuffer) void thread(workerData as BareRingInit);

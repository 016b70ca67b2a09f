// Runs on: main (bareBarrier: starts the threads, times them,
// and, for the message barrier, acts as its hub) and on their own worker threads
// (this file, started as a worker). Owns: the two barriers bench
// barrier_throughput compares kernbench's host barrier with, with nothing else
// on their threads, and three wake-up patterns measured against the first
// (docs/decisions/0032-the-host-barrier-keeps-one-notify.md).
//
//   atomics  the host barrier's protocol (lib/host/host-runtime.ts barrier) on
//            bare threads: the k-th barrier of n threads completes when a
//            shared arrivals counter, which only goes up, reaches (k + 1) n.
//            A thread adds its arrival and waits with Atomics.waitAsync, as the
//            executors do; the last to arrive notifies, once, every waiter.
//   message  the same barrier over postMessage: each thread posts its arrival
//            to main, which posts 'go' to every thread once all n have arrived.
//   none     no barrier at all: the negative control of the check below (its
//            test expects violations), never timed by the bench.
//
// Wake-up patterns (same arrivals counter; not timed by the bench, run them
// with ./cpu.ts):
//   tree     each thread parks on its own release word; the last arrival
//            wakes two threads, each woken thread its two children, in a
//            binary tree rooted at the last arrival (one notify per word).
//   chain    the last arrival notifies at most CHAIN_FANOUT waiters on the
//            arrivals word; each thread that a notify woke and that finds the
//            barrier complete passes CHAIN_FANOUT more on. Relies on a
//            word's waiters being woken first-in first-out (ECMAScript's
//            WaiterList), so a barrier's waiters are ahead of the next one's.
//   serial   the last arrival wakes the waiters one by one: up to n - 1
//            notifies of one waiter each, stopping at the first that finds none.
//   sync     the atomics barrier with a synchronous Atomics.wait: the thread
//            never returns to its event loop between barriers (a futex wake,
//            no event-loop hop).
//   sync-await  the same with one `await null` per barrier, as a host
//            barrier's caller awaits its promise (decision 0032, 2026-11-25).
//
// All check what a barrier promises: before arriving at barrier k a thread
// stores k + 1 in its own word; after passing it, it reads every thread's word
// and counts a violation for each one still below k + 1.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { threadExecArgv } from '../../lib/session/thread-flags.js';

export type BareBarrierKind = 'atomics' | 'message' | 'none' | 'tree' | 'chain' | 'serial' | 'sync' | 'sync-await';

interface BarrierThreadInit {
  kind: BareBarrierKind;
  sab: SharedArrayBuffer;
  index: number;
  n: number;
  count: number;
}

/** Messages from a barrier thread to main. */
type FromThread = { type: 'ready' } | { type: 'arrive' } | { type: 'done'; at: number; violations: number };

/** Words per thread (one cache line each, so threads do not share one). */
const STRIDE = 16;
/** ctl words, a cache line each: the start signal, the arrivals counter, then one per thread. */
const GO = 0;
const ARRIVALS = STRIDE;
/** tree: the thread that arrived last at the barrier being released (the tree's root); written by it before it wakes anyone. */
const ROOT = ARRIVALS + 1;
/** A thread's word for the check: k + 1 once it arrives at barrier k. */
const wordOf = (thread: number): number => (2 + thread) * STRIDE;
/** tree: a thread's release word, k + 1 once its parent releases it from barrier k (in its own cache line's second word). */
const releaseOf = (thread: number): number => wordOf(thread) + 1;
/** chain: waiters each woken thread wakes. */
const CHAIN_FANOUT = 2;

export interface BareBarrierRun {
  /** Wall ms from the start signal to the last thread's end. */
  ms: number;
  /** Threads seen short of a barrier by a thread that had passed it (0 for a correct barrier). */
  violations: number;
}

/** Run `count` barriers of `kind` across n threads; `onStart` runs once every thread is up, just before the start signal. */
export async function bareBarrier(kind: BareBarrierKind, n: number, count: number, onStart?: () => void): Promise<BareBarrierRun> {
  const sab = new SharedArrayBuffer(4 * wordOf(n));
  const ctl = new Int32Array(sab);
  const workers: Worker[] = [];
  try {
    const ready: Promise<void>[] = [];
    const done: Promise<{ at: number; violations: number }>[] = [];
    let arrived = 0;
    for (let index = 0; index < n; index++) {
      const w = new Worker(new URL(import.meta.url), { workerData: { kind, sab, index, n, count } satisfies BarrierThreadInit, execArgv: threadExecArgv() });
      workers.push(w);
      let onReady: () => void = () => undefined;
      ready.push(new Promise<void>((resolve) => (onReady = resolve)));
      done.push(
        new Promise((resolve, reject) => {
          w.on('error', reject);
          w.on('exit', (code) => reject(new Error(`${kind} barrier thread ${index} exited early, got exit code ${code}`)));
          w.on('message', (m: FromThread) => {
            switch (m.type) {
              case 'ready':
                onReady();
                break;
              case 'arrive':
                // The message barrier's hub: release everyone once all n have arrived.
                if (++arrived === n) {
                  arrived = 0;
                  for (const x of workers) x.postMessage('go');
                }
                break;
              case 'done':
                resolve(m);
                break;
              default: {
                const never: never = m;
                reject(new Error(`unknown message from a barrier thread, got ${JSON.stringify(never)}`));
              }
            }
          });
        }),
      );
    }
    await Promise.all(ready);
    onStart?.();
    const t0 = performance.timeOrigin + performance.now();
    Atomics.store(ctl, GO, 1);
    Atomics.notify(ctl, GO);
    const ends = await Promise.all(done);
    return { ms: Math.max(...ends.map((e) => e.at)) - t0, violations: ends.reduce((s, e) => s + e.violations, 0) };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Wait (without blocking the event loop) until ctl[word] >= target. */
async function waitAtLeast(ctl: Int32Array, word: number, target: number): Promise<void> {
  let v: number;
  while ((v = Atomics.load(ctl, word)) < target) {
    const r = Atomics.waitAsync(ctl, word, v);
    if (r.async) await r.value;
  }
}

async function thread({ kind, sab, index, n, count }: BarrierThreadInit): Promise<void> {
  const ctl = new Int32Array(sab);
  const port = parentPort!;
  // A pending waitAsync does not keep a thread's event loop alive; this does, until main terminates the thread.
  setInterval(() => undefined, 1 << 30);
  let released: () => void = () => undefined;
  port.on('message', () => released());
  port.postMessage({ type: 'ready' } satisfies FromThread);
  await waitAtLeast(ctl, GO, 1);
  let violations = 0;
  for (let k = 0; k < count; k++) {
    Atomics.store(ctl, wordOf(index), k + 1);
    const target = (k + 1) * n;
    switch (kind) {
      case 'atomics':
        if (Atomics.add(ctl, ARRIVALS, 1) + 1 === target) Atomics.notify(ctl, ARRIVALS);
        else await waitAtLeast(ctl, ARRIVALS, target);
        break;
      case 'message': {
        const go = new Promise<void>((resolve) => (released = resolve));
        port.postMessage({ type: 'arrive' } satisfies FromThread);
        await go;
        break;
      }
      case 'tree': {
        let root = index;
        if (Atomics.add(ctl, ARRIVALS, 1) + 1 === target) Atomics.store(ctl, ROOT, index);
        else {
          await waitAtLeast(ctl, releaseOf(index), k + 1);
          root = Atomics.load(ctl, ROOT); // the next barrier's root cannot be written before this thread arrives there
        }
        const me = (index - root + n) % n;
        for (let c = 2 * me + 1; c <= 2 * me + 2 && c < n; c++) {
          const child = (c + root) % n;
          Atomics.store(ctl, releaseOf(child), k + 1);
          Atomics.notify(ctl, releaseOf(child));
        }
        break;
      }
      case 'chain':
        if (Atomics.add(ctl, ARRIVALS, 1) + 1 === target) Atomics.notify(ctl, ARRIVALS, CHAIN_FANOUT);
        else {
          let v: number;
          while ((v = Atomics.load(ctl, ARRIVALS)) < target) {
            const r = Atomics.waitAsync(ctl, ARRIVALS, v);
            if (!r.async) continue;
            await r.value;
            // Woken by a notify: pass it on, unless it was early (this barrier not complete: the wake was meant for an earlier barrier's waiter, and none is left).
            if (Atomics.load(ctl, ARRIVALS) >= target) Atomics.notify(ctl, ARRIVALS, CHAIN_FANOUT);
          }
        }
        break;
      case 'serial':
        if (Atomics.add(ctl, ARRIVALS, 1) + 1 === target) {
          for (let i = 1; i < n; i++) if (Atomics.notify(ctl, ARRIVALS, 1) === 0) break;
        } else await waitAtLeast(ctl, ARRIVALS, target);
        break;
      case 'sync':
      case 'sync-await':
        if (Atomics.add(ctl, ARRIVALS, 1) + 1 === target) Atomics.notify(ctl, ARRIVALS);
        else {
          let v: number;
          while ((v = Atomics.load(ctl, ARRIVALS)) < target) Atomics.wait(ctl, ARRIVALS, v);
        }
        if (kind === 'sync-await') await null;
        break;
      case 'none':
        break;
      default: {
        const never: never = kind;
        throw new Error(`unknown bare barrier kind, got '${String(never)}'`);
      }
    }
    for (let i = 0; i < n; i++) if (Atomics.load(ctl, wordOf(i)) < k + 1) violations++;
  }
  port.postMessage({ type: 'done', at: performance.timeOrigin + performance.now(), violations } satisfies FromThread);
}

if (!isMainThread && (workerData as Partial<BarrierThreadInit> | null)?.sab instanceof SharedArrayBuffer) void thread(workerData as BarrierThreadInit);

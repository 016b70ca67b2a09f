// Runs on: main (enableYoungGc, before any of our threads starts) and executor
// threads (the rest). Owns: collecting an executor's young generation when it
// is idle after a kernel epoch, instead of wherever an allocation happens to
// fill it (decision 0009).
//
// Why. A scavenge stops one isolate for 2-13 ms here, copying everything
// still alive. Mid-collective, that is every running kernel's state, and on
// a ring split across threads it stalls the other threads too: their ranks
// wait for this one's messages within a step (bench sim_throughput, two
// threads: the median spawn took twice the best one). After the last kernel
// on a thread ends (lib/tile/slab.ts calls that the end of an epoch), the
// kernels' objects are dead: a scavenge then copies little, and the next
// epoch starts with an empty nursery. The thread does it the next time it
// would go to sleep, so it costs nobody anything they were waiting for.
//
// How. Node has no API to ask for a minor GC; V8's `gc` function does it
// (`gc({ type: 'minor' })`). Main turns on V8's `--expose-gc` before it
// creates its first thread, so every thread started after that has `gc` as a
// global (non-configurable: it cannot be hidden again). The check is cheap
// and rate-limited: at most one look at the heap per millisecond of wall
// time, and a collection only when the nursery holds at least MIN_BYTES and a
// quarter of a semi-space. Virtual time never depends on any of this.
import v8 from 'node:v8';

/** Below this much young garbage a scavenge is not worth its fixed cost. */
const MIN_BYTES = 256 << 10;
/** Wall-clock ms between two looks at the heap (reading its statistics costs ~2 us). */
const CHECK_EVERY_MS = 1;

type MinorGc = (options: { type: 'minor' }) => void;

/**
 * Main, before creating threads: make V8's `gc` available to the threads
 * created from now on. Returns false when this V8 cannot (the caller then
 * runs without epoch collections).
 */
export function enableYoungGc(): boolean {
  if (typeof (globalThis as { gc?: unknown }).gc === 'function') return true; // node --expose-gc
  try {
    v8.setFlagsFromString('--expose-gc');
    return true;
  } catch {
    return false;
  }
}

/** Whether the idle-time collections are on: KERNBENCH_EPOCH_GC=0 turns them off (for A/B measurements). */
export function epochGcFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.KERNBENCH_EPOCH_GC !== '0';
}

let gc: MinorGc | null = null;
/** A kernel epoch ended on this thread since the last look. */
let pending = false;
let lastCheck = -Infinity;
let collections = 0;

/** An executor thread, at session start: collect when idle after an epoch, or not. */
export function configureYoungGc(on: boolean): void {
  const g = (globalThis as { gc?: unknown }).gc;
  gc = on && typeof g === 'function' ? (g as MinorGc) : null;
  pending = false;
  lastCheck = -Infinity;
  collections = 0;
}

/** The last kernel running on this thread ended (lib/tile/slab.ts): its objects are garbage now. */
export function epochEnded(): void {
  pending = gc !== null;
}

/**
 * The thread is about to sleep (./scheduler.ts: nothing on it can run until
 * another thread publishes). If a kernel epoch ended since the last look and
 * the nursery holds enough to be worth it, collect it now. Returns whether it
 * collected.
 */
export function collectIfIdle(): boolean {
  if (!pending || gc === null) return false;
  const now = performance.now();
  if (now - lastCheck < CHECK_EVERY_MS) return false;
  lastCheck = now;
  pending = false;
  for (const s of v8.getHeapSpaceStatistics()) {
    if (s.space_name !== 'new_space') continue;
    // A semi-space's capacity now is what is used plus what is left (space_size is what is
    // committed: one semi-space or both, and V8 may shrink the capacity below it).
    if (s.space_used_size < Math.max(MIN_BYTES, (s.space_used_size + s.space_available_size) / 4)) return false;
    gc({ type: 'minor' });
    collections++;
    return true;
  }
  return false;
}

/** Collections on this thread since configureYoungGc. */
export function youngCollections(): number {
  return collections;
}

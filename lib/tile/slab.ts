// Runs on: executor threads. Owns: allocation of tile storage, and its reuse.
//
// Small typed arrays each with their own ArrayBuffer cost an off-heap
// allocation apiece (measured: it dominated the per-message cost in bench
// sim_throughput); carving tiles out of a slab makes an allocation a bump of
// an offset. A slab is a WebAssembly memory so that the SIMD add
// (lib/tile/simd.ts) can work on tiles in place.
//
// Reuse. Fresh memory costs a page fault per 4 KiB on first touch (~1.5-3 us
// each on this VM: a 64 KiB tl.load spent most of its ~30 us there). Tiles,
// like Triton's block tensors, live only while their kernel runs: nothing a
// kernel returns is kept, and tl.drain() has finished every transfer into or
// out of its tiles before the kernel ends. So a slab is recycled once every
// kernel that has tiles in it has ended (decision 0033): zeroed where used and
// kept for the next allocation on the thread, by any kernel, even while
// others still run. A kernel run has an identity of its own, a KernelRun
// (kernelStarted makes it), which its `tl` hands to every allocation it
// makes; memory handed out without a running kernel's identity pins its slab
// until no kernel runs on the thread (the end of an epoch), as every slab
// once was. Fault attribution (lib/sync/fault-owner.ts) plays no part in it. A failed kernel may leave transfers queued on its tiles, so
// its slabs (and an epoch's pinned ones, should any kernel of it fail) go to
// the GC instead. A kernel must not keep a tile (or its data) past its own
// end, e.g. in a module-level variable: the memory will hold another kernel's
// values.
//
// Returning memory. At most MAX_KEPT slabs are kept; the rest are dropped, and
// V8 frees a dropped slab only in a full collection, which a thread whose heap
// grows slowly may not run for a long time: the thread asks for one each time
// COLLECT_AFTER_BYTES of slabs were dropped. A ring all-reduce at
// p = 1024 x 64 KiB with data, under --threads 1, holds 64 MiB of loaded
// shards at once; the ranks' kernels end one after the other, and each rank
// then reads its 64 KiB result (numpy()): the shards' slabs were all kept to
// the end of the epoch (8 of them past it) while the results were made, 64
// MiB more at the peak (docs/benchmarks.md, "Peak memory").
//
// Timing-only mode (--no-data). Kernels move and compute no values there, so
// a tile needs its shape and length, not storage of its own: every such tile
// of a thread views one zeroed buffer (blankTile), which takes no slab bytes
// and lives across epochs. Without it a ring all-reduce at p = 1024 x 64 KiB
// under --threads 1 took 64 MiB of slabs for the loaded shards and 128 MiB
// for the reductions' results, all held for the whole collective (one epoch;
// docs/benchmarks.md, "Peak memory"). What a kernel reads from such a tile is
// unspecified under --no-data (zeros unless the kernel itself wrote there).
import type { DType } from '../dtype/index.js';
import { simdMemory, type SimdMemory } from './simd.js';
import { Tile } from './tile.js';
import { blankF32 } from './blank.js';

const SLAB_BYTES = 4 * 1024 * 1024;
/** Larger allocations get their own plain ArrayBuffer (and the scalar add). */
const MAX_IN_SLAB = SLAB_BYTES / 4;
/** Zeroed slabs a thread keeps for reuse (resident memory: 8 MiB); more are left to the GC. */
const MAX_KEPT = 2;
/** A full collection once this many bytes of slabs were left to the GC since the last one. */
const COLLECT_AFTER_BYTES = 4 * SLAB_BYTES;

/** A slab and who may still hold tiles in it. */
interface Slab {
  s: SimdMemory;
  /** Bytes handed out (set when it stops being the current slab). */
  used: number;
  /** Running kernels that carved tiles from it. */
  users: number;
  /** It holds memory handed out while no kernel ran (tests, the bench model): never recycled. */
  outside: boolean;
  /** A kernel that may have tiles in it failed: transfers may still target them. */
  failed: boolean;
  /** Memory in it was handed out to code no running kernel could be named for: recycled only at the end of the epoch. */
  pinned: boolean;
}

/**
 * A kernel run's identity as tile memory knows it, from kernelStarted to kernelEnded:
 * the allocations made for the kernel name it, and it holds the slabs it has tiles in.
 */
export interface KernelRun {
  readonly generation: number;
  readonly slabs: Slab[];
}

/** The slab being carved (its bytes below `top` are handed out; the rest are zero). */
let slab: Slab | undefined;
let top = 0;
/** Zeroed slabs ready for use. */
const kept: SimdMemory[] = [];
/** Kernels running on this thread (of the current generation). */
const running = new Set<KernelRun>();
/** Slabs no longer current, pinned, with kernels still running: recycled when the epoch ends. */
const pinned: Slab[] = [];
/** A kernel failed in this epoch (pinned slabs then go to the GC). */
let failedInEpoch = false;
/** Bumped by resetSlabs: a kernel that started before it no longer counts. */
let generation = 0;
/** Bytes of slabs left to the GC since the last full collection asked for. */
let dropped = 0;

/** Bytes carved out of slabs on this thread so far (for tests: timing-only tiles take none). */
let handedOut = 0;
/** Slabs recycled while another kernel still ran, and full collections asked for (for tests). */
let early = 0;
let collections = 0;

/** Byte offset in the current slab of `bytes` fresh zeroed bytes (bytes <= MAX_IN_SLAB) for kernel run `run`. */
function carve(bytes: number, run: KernelRun | undefined): number {
  handedOut += bytes;
  if (slab === undefined || top + bytes > SLAB_BYTES) {
    closeSlab();
    slab = { s: kept.pop() ?? simdMemory(SLAB_BYTES), used: 0, users: 0, outside: false, failed: false, pinned: false };
  }
  if (running.size === 0) slab.outside = true;
  else {
    // The kernel run the memory is for holds it until it ends; memory named for no running
    // kernel pins the slab until the epoch's end, as every slab once did.
    if (run === undefined || !running.has(run)) slab.pinned = true;
    else if (run.slabs[run.slabs.length - 1] !== slab) {
      run.slabs.push(slab);
      slab.users++;
    }
  }
  const at = top;
  top += (bytes + 15) & ~15;
  return at;
}

/** The current slab is full or its epoch ended: recycle it now if no kernel may hold tiles in it. */
function closeSlab(): void {
  const s = slab;
  slab = undefined;
  if (s === undefined) return;
  s.used = top;
  top = 0;
  if (s.pinned && running.size > 0) pinned.push(s);
  else if (s.users === 0) release(s);
}

/**
 * No kernel holds tiles in `s` any more. A clean slab is zeroed where used and
 * kept (up to MAX_KEPT) for the thread's next slab, even while other kernels of
 * the epoch still run. The rest go to the GC, which is
 * asked for a full collection once COLLECT_AFTER_BYTES of them wait: a slab is
 * old-generation memory V8 only frees in a full collection, and the thread's
 * heap grows slowly enough that one may come long after. At the end of a ring
 * all-reduce at p = 1024 x 64 KiB with data, the ranks' numpy() results (64
 * MiB) were made while 64 MiB of ended kernels' slabs still waited for it
 * (docs/benchmarks.md, "Peak memory"; decision 0033).
 */
function release(s: Slab): void {
  if (running.size > 0) early++;
  if (!s.outside && !s.failed && kept.length < MAX_KEPT) {
    new Uint8Array(s.s.buffer, 0, s.used).fill(0);
    kept.push(s.s);
    return;
  }
  dropped += SLAB_BYTES;
  if (dropped < COLLECT_AFTER_BYTES) return;
  dropped = 0;
  // Executors have V8's gc when main turned on --expose-gc before starting them (../sync/young-gc.ts).
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== 'function') return;
  collections++;
  (gc as () => void)();
}

/** A zeroed Float32Array of n elements, for kernel run `run`. */
export function allocF32(n: number, run?: KernelRun): Float32Array {
  const bytes = n * 4;
  if (bytes > MAX_IN_SLAB) return new Float32Array(n);
  const at = carve(bytes, run);
  return new Float32Array((slab as Slab).s.buffer, at, n);
}

/** n zeroed bytes of tile memory for kernel run `run` (a queued send's snapshot of its payload). */
export function allocBytes(n: number, run?: KernelRun): Uint8Array {
  if (n > MAX_IN_SLAB) return new Uint8Array(n);
  const at = carve(n, run);
  return new Uint8Array((slab as Slab).s.buffer, at, n);
}

/** A zeroed tile of `shape` (n elements) for kernel run `run`, placed in a slab when small enough so the SIMD add applies. */
export function allocTile(dtype: DType, shape: readonly number[], n: number, run?: KernelRun): Tile {
  const bytes = n * 4;
  if (bytes > MAX_IN_SLAB) return new Tile(dtype, shape, new Float32Array(n));
  const at = carve(bytes, run);
  const s = (slab as Slab).s;
  return new Tile(dtype, shape, new Float32Array(s.buffer, at, n), s, at);
}

/** A timing-only tile of `shape` (n elements): a view of the blank buffer, no slab bytes. */
export function blankTile(dtype: DType, shape: readonly number[], n: number): Tile {
  return new Tile(dtype, shape, blankF32(n));
}

/**
 * A kernel starts on this thread (lib/pe/pe-runtime.ts): its identity, for the
 * allocations made for it and, at its end, for kernelEnded.
 */
export function kernelStarted(): KernelRun {
  const k: KernelRun = { generation, slabs: [] };
  running.add(k);
  return k;
}

/**
 * A kernel ended on this thread; `ok` is false if it threw. Each slab it may
 * hold tiles in is recycled once no other running kernel may (a failed
 * kernel's go to the GC: transfers may still target them). The last kernel
 * running (the end of an epoch) makes this return true. A kernel from before
 * the last resetSlabs is ignored.
 */
export function kernelEnded(k: KernelRun, ok: boolean): boolean {
  if (k.generation !== generation || !running.delete(k)) return false;
  if (!ok) failedInEpoch = true;
  for (const s of k.slabs) {
    if (!ok) s.failed = true;
    if (--s.users === 0 && s !== slab && !s.pinned) release(s);
  }
  if (running.size > 0) return false;
  if (failedInEpoch && slab?.pinned === true) slab.failed = true;
  closeSlab();
  // Any pinned slab may hold the tiles of a kernel of the epoch that failed.
  for (const s of pinned) {
    if (failedInEpoch) s.failed = true;
    release(s);
  }
  pinned.length = 0;
  failedInEpoch = false;
  return true;
}

/**
 * Forget every slab handed out so far and start counting kernels afresh (an
 * executor calls it when a session starts on its thread). A kernel of an
 * earlier session that never ended, e.g. one still awaiting something the
 * runtime does not control after an abort, would otherwise hold its slabs for
 * recycling that never comes, and the epoch open for good. Its own tiles stay
 * alive as long as it references them.
 */
export function resetSlabs(): void {
  generation++;
  running.clear();
  pinned.length = 0;
  failedInEpoch = false;
  slab = undefined;
  top = 0;
}

/**
 * Slabs this thread holds for reuse, bytes handed out of the current one, bytes carved from
 * slabs since the thread started, slabs recycled while another kernel still ran and full
 * collections asked for (for tests).
 */
export function slabStats(): { kept: number; top: number; handedOut: number; early: number; collections: number } {
  return { kept: kept.length, top, handedOut, early, collections };
}

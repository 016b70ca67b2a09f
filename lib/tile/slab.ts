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
// out of its tiles before the kernel ends. So slabs are recycled per thread
// by epoch: an epoch is a period in which at least one kernel runs on the
// thread; when the last one ends and every kernel of the epoch succeeded, the
// epoch's slabs are zeroed (the part used) and kept for the next epoch. A
// failed kernel may leave transfers queued on its tiles, so an epoch with a
// failure leaves its slabs to the GC instead. A kernel must not keep a tile
// (or its data) past its own end, e.g. in a module-level variable: the
// memory will hold another kernel's values.
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
/** Zeroed slabs a thread keeps between epochs; more are left to the GC. */
const MAX_KEPT = 8;

/** The slab being carved (its bytes below `top` are handed out; the rest are zero). */
let slab: SimdMemory | undefined;
let top = 0;
/** Slabs filled earlier in this epoch, with how many bytes of each were handed out. */
const filled: { s: SimdMemory; used: number }[] = [];
/** Zeroed slabs ready for use. */
const kept: SimdMemory[] = [];
let running = 0;
let failed = false;
/** Bumped by resetSlabs: a kernel that started before it no longer counts. */
let generation = 0;
/** Whether the current slab holds allocations made while no kernel ran (tests, the bench model): never recycled. */
let outside = false;

/** Bytes carved out of slabs on this thread so far (for tests: timing-only tiles take none). */
let handedOut = 0;

/** Byte offset in `slab` of `bytes` fresh zeroed bytes (bytes <= MAX_IN_SLAB). */
function carve(bytes: number): number {
  handedOut += bytes;
  if (slab === undefined || top + bytes > SLAB_BYTES) {
    if (slab !== undefined && !outside) filled.push({ s: slab, used: top });
    slab = kept.pop() ?? simdMemory(SLAB_BYTES);
    top = 0;
    outside = false;
  }
  if (running === 0) outside = true;
  const at = top;
  top += (bytes + 15) & ~15;
  return at;
}

/** A zeroed Float32Array of n elements. */
export function allocF32(n: number): Float32Array {
  const bytes = n * 4;
  if (bytes > MAX_IN_SLAB) return new Float32Array(n);
  const at = carve(bytes);
  return new Float32Array((slab as SimdMemory).buffer, at, n);
}

/** n zeroed bytes of tile memory (a queued send's snapshot of its payload). */
export function allocBytes(n: number): Uint8Array {
  if (n > MAX_IN_SLAB) return new Uint8Array(n);
  const at = carve(n);
  return new Uint8Array((slab as SimdMemory).buffer, at, n);
}

/** A zeroed tile of `shape` (n elements), placed in a slab when small enough so the SIMD add applies. */
export function allocTile(dtype: DType, shape: readonly number[], n: number): Tile {
  const bytes = n * 4;
  if (bytes > MAX_IN_SLAB) return new Tile(dtype, shape, new Float32Array(n));
  const at = carve(bytes);
  const s = slab as SimdMemory;
  return new Tile(dtype, shape, new Float32Array(s.buffer, at, n), s, at);
}

/** A timing-only tile of `shape` (n elements): a view of the blank buffer, no slab bytes. */
export function blankTile(dtype: DType, shape: readonly number[], n: number): Tile {
  return new Tile(dtype, shape, blankF32(n));
}

/** A kernel starts on this thread (lib/pe/pe-runtime.ts); pass what it returns to kernelEnded. */
export function kernelStarted(): number {
  running++;
  return generation;
}

/**
 * A kernel ended on this thread; `ok` is false if it threw. The last one of
 * an epoch recycles its slabs and makes this return true. A kernel from
 * before the last resetSlabs is ignored.
 */
export function kernelEnded(started: number, ok: boolean): boolean {
  if (started !== generation) return false;
  running--;
  if (!ok) failed = true;
  if (running > 0) return false;
  // Transfers of a failed kernel may still target this epoch's slabs, and
  // memory handed out while no kernel ran may still be in use: those slabs go
  // to the GC. The rest are zeroed where used and kept.
  if (slab !== undefined && !outside) filled.push({ s: slab, used: top });
  slab = undefined;
  top = 0;
  outside = false;
  if (!failed) {
    for (const f of filled) {
      if (kept.length === MAX_KEPT) break;
      new Uint8Array(f.s.buffer, 0, f.used).fill(0);
      kept.push(f.s);
    }
  }
  filled.length = 0;
  failed = false;
  return true;
}

/**
 * Forget every slab handed out so far and start counting kernels afresh (an
 * executor calls it when a session starts on its thread). A kernel of an
 * earlier session that never ended, e.g. one still awaiting something the
 * runtime does not control after an abort, would otherwise hold the epoch
 * open for good, and every slab after it would be kept for recycling that
 * never comes. Its own tiles stay alive as long as it references them.
 */
export function resetSlabs(): void {
  generation++;
  running = 0;
  failed = false;
  outside = false;
  filled.length = 0;
  slab = undefined;
  top = 0;
}

/** Slabs this thread holds for reuse, bytes handed out of the current one, and bytes carved from slabs since the thread started (for tests). */
export function slabStats(): { kept: number; filled: number; top: number; handedOut: number } {
  return { kept: kept.length, filled: filled.length, top, handedOut };
}

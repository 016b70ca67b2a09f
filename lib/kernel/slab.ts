// Runs on: executor threads. Owns: allocation of tile storage. Small typed
// arrays each with their own ArrayBuffer cost an off-heap allocation apiece
// (measured: it dominated the per-message cost in bench sim_throughput);
// carving tiles out of a shared slab makes an allocation a bump of an offset.
// A slab is freed by the GC once no tile views it.

const SLAB_BYTES = 4 * 1024 * 1024;

let slab = new ArrayBuffer(SLAB_BYTES);
let top = 0;

/** A zeroed Float32Array of n elements. */
export function allocF32(n: number): Float32Array {
  const bytes = n * 4;
  if (bytes > SLAB_BYTES / 4) return new Float32Array(n);
  if (top + bytes > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    top = 0;
  }
  const a = new Float32Array(slab, top, n);
  top += (bytes + 15) & ~15;
  return a;
}

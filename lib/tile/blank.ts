// Runs on: executor threads. Owns: the storage of timing-only tiles (--no-data):
// one zeroed buffer per thread that every such tile views, so that they take
// no slab bytes (lib/tile/slab.ts, "Timing-only mode"). Apart from slab.ts so
// that Tile.slice (./tile.ts) can cut a timing-only tile without an import cycle.

/** The buffer (grown to the largest length asked for), and its views by length. */
let blank = new Float32Array(0);
const views = new Map<number, Float32Array>();
/** Distinct lengths whose views are kept; past it the map starts over (a kernel uses few). */
const MAX_VIEWS = 64;

/** A Float32Array of n elements on this thread's blank buffer: no storage of its own, the same array for the same n. */
export function blankF32(n: number): Float32Array {
  let v = views.get(n);
  if (v !== undefined) return v;
  if (n > blank.length) {
    blank = new Float32Array(Math.max(n, 2 * blank.length));
    views.clear();
    generation++;
  }
  if (views.size === MAX_VIEWS) views.clear();
  v = blank.subarray(0, n);
  views.set(n, v);
  return v;
}

/** Bumped whenever the blank buffer is replaced by a larger one (its old views stop being blank). */
let generation = 0;

/** The blank buffer's generation: a tile made on it now stays blank while this is unchanged. */
export function blankGeneration(): number {
  return generation;
}

/** Whether `data` is a view of the blank buffer (a timing-only tile's). */
export function isBlank(data: Float32Array): boolean {
  return data.buffer === blank.buffer;
}

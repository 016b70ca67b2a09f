// Runs on: any thread. Owns: building an array from its indices.
//
// `Array.from({ length: n }, f)` and `Float32Array.from({ length: n }, f)` go
// through the generic array-like path in Node 20's V8: measured ~11 us for 64
// elements (a plain loop: ~0.3 us) and ~175 ns per element (a loop: ~6 ns).
// Placement, barriers and the TP layers build such arrays per call, so they use these.

/**
 * [f(0), f(1), ..., f(n - 1)]. Built with push, so the array is packed: a
 * `new Array(n)` filled in place stays "holey" to V8, and JSON.stringify of a
 * holey 64-element array (a launch command's world) takes twice as long.
 */
export function tabulate<T>(n: number, f: (i: number) => T): T[] {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(f(i));
  return out;
}

/** A Float32Array of f(0), ..., f(n - 1) (each rounded to f32 on store). */
export function tabulateF32(n: number, f: (i: number) => number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = f(i);
  return out;
}

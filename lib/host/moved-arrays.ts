// Runs on: any host thread (numpy() registers here); executor threads (a
// rank's result). Owns: the set of ArrayBuffers that numpy() made on this
// thread, and which of them a rank's result moves to main instead of copying.
//
// Why. A spawned rank's return value crosses to main by structured clone: the
// executor's array, the serialized message and main's copy were three copies
// of every result at once. A ring all-reduce at p = 1024 x 64 KiB returns
// 64 MiB of numpy() results, and that end of the run was its peak memory
// (docs/benchmarks.md, "Peak memory"; decision 0031). numpy() hands out a
// fresh array, so its buffer can be transferred: main gets the same bytes
// with no copy, an ordinary ArrayBuffer of its own that nobody else can see
// or change.
//
// Only numpy()'s buffers move. A buffer the rank's code made itself may be
// shared with later ranks on the thread (a module-level table returned by
// every rank): moving it would empty it for them, so it is copied as before.
// The price: an array a rank got from numpy() and returned is empty on the
// rank's thread after the rank ends (its buffer is detached), should the
// rank's code have kept it, e.g. in a module-level variable.

/** Buffers numpy() made on this thread and that have not moved yet. */
const made = new WeakSet<ArrayBuffer>();

/** numpy() made this array's buffer for its caller alone: it may move to main with a rank's result. */
export function madeForHost(a: ArrayBufferView): void {
  if (a.buffer instanceof ArrayBuffer) made.add(a.buffer);
}

/**
 * The buffers of numpy() results that `value` holds (in arrays, objects' own
 * enumerable properties, Maps and Sets, at any depth), each once: the transfer list of the message
 * that carries `value` to main. They are forgotten here: they are about to move.
 */
export function movableBuffers(value: unknown): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || seen.has(v)) continue;
    seen.add(v);
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) {
      const b = ArrayBuffer.isView(v) ? v.buffer : v;
      // Not a buffer that moved elsewhere already (byteLength 0: numpy() makes none empty):
      // postMessage drops, without a word, a message whose transfer list holds a detached
      // buffer (Node 20), and the rank's spawn would wait for it for ever; cloned, it fails
      // the rank with a DataCloneError instead.
      if (b instanceof ArrayBuffer && made.has(b) && b.byteLength > 0) out.push(b);
      if (b instanceof ArrayBuffer) made.delete(b);
    } else if (Array.isArray(v)) {
      for (const x of v) if (typeof x === 'object') stack.push(x);
    } else if (v instanceof Map) {
      for (const [k, x] of v) stack.push(k, x);
    } else if (v instanceof Set) {
      for (const x of v) stack.push(x);
    } else {
      // Structured clone copies an object's own enumerable properties (a class instance arrives as a plain object).
      for (const x of Object.values(v)) if (typeof x === 'object') stack.push(x);
    }
  }
  return out;
}

// Runs on: any thread (each SharedState makes its own). Owns: the session's `ctl` words as
// a shared WebAssembly memory, and a sequentially consistent load of one word compiled to
// a plain instruction (decision 0278). `Atomics.load` from JavaScript is a call of a
// builtin that V8 does not inline; a call of this export is cheaper, and it is the same
// load in the one memory model JavaScript and WebAssembly share. The message path's
// hottest loads go through it; the rest keep `Atomics.load`.

/**
 * The part of the WebAssembly JS API used here. Node has it as a global, but TypeScript
 * declares it only in the DOM libs, which this project leaves out (as lib/tile/simd.ts).
 */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number; maximum: number; shared: true }) => CtlMemory;
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}

/** A shared WebAssembly memory: its buffer is a SharedArrayBuffer, and it can be posted to another thread. */
export interface CtlMemory {
  readonly buffer: SharedArrayBuffer;
}

/** Load word `word` (an index of 32-bit words) with sequentially consistent order. */
export type WordLoad = (word: number) => number;

const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

const PAGE_BYTES = 65536;

// (module (import "e" "m" (memory 1 65536 shared))
//   (func (export "l") (param i32) (result i32)
//     (i32.atomic.load (i32.shl (local.get 0) (i32.const 2)))))
// prettier-ignore
const MODULE_BYTES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, // type: (i32) -> i32
  0x02, 0x0b, 0x01, 0x01, 0x65, 0x01, 0x6d, 0x02, 0x03, 0x01, 0x80, 0x80, 0x04, // import e.m: shared memory, 1 to 65536 pages
  0x03, 0x02, 0x01, 0x00, // one function of type 0
  0x07, 0x05, 0x01, 0x01, 0x6c, 0x00, 0x00, // export "l"
  0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x41, 0x02, 0x74, 0xfe, 0x10, 0x02, 0x00, 0x0b, // local.get 0, i32.const 2, i32.shl, i32.atomic.load align 4
]);

let compiled: object | undefined;

/** `ctl` words: a shared WebAssembly memory of at least `words` 32-bit words, or, without WebAssembly (`node --jitless`), a plain SharedArrayBuffer. */
export function ctlBuffer(words: number): { buffer: SharedArrayBuffer; memory: CtlMemory | null } {
  if (wasm === undefined) return { buffer: new SharedArrayBuffer(words * 4), memory: null };
  const pages = Math.max(1, Math.ceil((words * 4) / PAGE_BYTES));
  const memory = new wasm.Memory({ initial: pages, maximum: pages, shared: true });
  return { buffer: memory.buffer, memory };
}

/** The load of `ctl`'s words: through WebAssembly when `memory` is one, else Atomics.load on `ctl`. */
export function wordLoad(memory: CtlMemory | null, ctl: Int32Array): WordLoad {
  if (memory === null || wasm === undefined) return (word) => Atomics.load(ctl, word);
  compiled ??= new wasm.Module(MODULE_BYTES);
  return new wasm.Instance(compiled, { e: { m: memory } }).exports.l as WordLoad;
}

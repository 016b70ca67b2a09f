// Runs on: any thread (each SharedState makes its own). Owns: the session's `ctl` words as
// a shared WebAssembly memory, and a sequentially consistent load, store and add of one
// word, each compiled to a single instruction (decisions 0278, 0280 and 0291). `Atomics.load`,
// `Atomics.store` and `Atomics.add` from JavaScript are calls of builtins that V8 does not
// inline; a call of these exports is cheaper, and they are the same operations in the one
// memory model JavaScript and WebAssembly share. The message path's hottest loads, stores
// and adds go through them; the rest keep `Atomics`.

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

/** Store `value` (an int32) in word `word` with sequentially consistent order, as Atomics.store does. */
export type WordStore = (word: number, value: number) => void;

/** Add `value` to word `word` atomically, sequentially consistent, as Atomics.add does; the word's value before. */
export type WordAdd = (word: number, value: number) => number;

const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

const PAGE_BYTES = 65536;

// (module (import "e" "m" (memory 1 65536 shared))
//   (func (export "l") (param i32) (result i32)
//     (i32.atomic.load (i32.shl (local.get 0) (i32.const 2))))
//   (func (export "s") (param i32 i32)
//     (i32.atomic.store (i32.shl (local.get 0) (i32.const 2)) (local.get 1)))
//   (func (export "a") (param i32 i32) (result i32)
//     (i32.atomic.rmw.add (i32.shl (local.get 0) (i32.const 2)) (local.get 1))))
// prettier-ignore
const MODULE_BYTES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x11, 0x03, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x00, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, // types: (i32) -> i32, (i32, i32) -> (), (i32, i32) -> i32
  0x02, 0x0b, 0x01, 0x01, 0x65, 0x01, 0x6d, 0x02, 0x03, 0x01, 0x80, 0x80, 0x04, // import e.m: shared memory, 1 to 65536 pages
  0x03, 0x04, 0x03, 0x00, 0x01, 0x02, // three functions, of types 0, 1 and 2
  0x07, 0x0d, 0x03, 0x01, 0x6c, 0x00, 0x00, 0x01, 0x73, 0x00, 0x01, 0x01, 0x61, 0x00, 0x02, // export "l", "s" and "a"
  0x0a, 0x29, 0x03,
  0x0b, 0x00, 0x20, 0x00, 0x41, 0x02, 0x74, 0xfe, 0x10, 0x02, 0x00, 0x0b, // local.get 0, i32.const 2, i32.shl, i32.atomic.load align 4
  0x0d, 0x00, 0x20, 0x00, 0x41, 0x02, 0x74, 0x20, 0x01, 0xfe, 0x17, 0x02, 0x00, 0x0b, // local.get 0, i32.const 2, i32.shl, local.get 1, i32.atomic.store align 4
  0x0d, 0x00, 0x20, 0x00, 0x41, 0x02, 0x74, 0x20, 0x01, 0xfe, 0x1e, 0x02, 0x00, 0x0b, // local.get 0, i32.const 2, i32.shl, local.get 1, i32.atomic.rmw.add align 4
]);

let compiled: object | undefined;

/** `ctl` words: a shared WebAssembly memory of at least `words` 32-bit words, or, without WebAssembly (`node --jitless`), a plain SharedArrayBuffer. */
export function ctlBuffer(words: number): { buffer: SharedArrayBuffer; memory: CtlMemory | null } {
  if (wasm === undefined) return { buffer: new SharedArrayBuffer(words * 4), memory: null };
  const pages = Math.max(1, Math.ceil((words * 4) / PAGE_BYTES));
  const memory = new wasm.Memory({ initial: pages, maximum: pages, shared: true });
  return { buffer: memory.buffer, memory };
}

/**
 * The load, the store and the add of `ctl`'s words: through WebAssembly when `memory` is
 * one, else Atomics.load, Atomics.store and Atomics.add on `ctl`.
 */
export function wordAccess(memory: CtlMemory | null, ctl: Int32Array): { load: WordLoad; store: WordStore; add: WordAdd } {
  if (memory === null || wasm === undefined) return { load: (word) => Atomics.load(ctl, word), store: (word, value) => void Atomics.store(ctl, word, value), add: (word, value) => Atomics.add(ctl, word, value) };
  compiled ??= new wasm.Module(MODULE_BYTES);
  const e = new wasm.Instance(compiled, { e: { m: memory } }).exports;
  return { load: e.l as WordLoad, store: e.s as WordStore, add: e.a as WordAdd };
}

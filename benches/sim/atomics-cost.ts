// Runs on: main (a script, not a bench: `kernbench list` does not show it).
// Owns: what one atomic access to shared memory costs from JavaScript, against the
// same access made by a WebAssembly function over a shared WebAssembly memory
// (decision 0273, "What would move these bars").
//
//   node dist/benches/sim/atomics-cost.js [millions of accesses]     # default 20
//
// Prints, for Atomics.load, Atomics.store and Atomics.add on an Int32Array, the
// nanoseconds an access takes from JavaScript and through an exported WebAssembly
// function (the call included), each the faster of two passes, and their ratio;
// and a loop with no access, for scale. Both paths address the same words of one
// shared memory. Wall time: compare within one run only.
import { leb, section } from '../../lib/tile/simd.js';
import { positive } from './args.js';

const I32 = 0x7f;
const vector = (items: number[][]): number[] => [...leb(items.length), ...items.flat()];
const name = (s: string): number[] => [...leb(s.length), ...Buffer.from(s)];

/**
 * The module, hand-assembled. Its text:
 *
 *   (module
 *     (import "e" "m" (memory 1 1 shared))
 *     (func (export "load") (param i32) (result i32) (i32.atomic.load (local.get 0)))
 *     (func (export "store") (param i32 i32) (i32.atomic.store (local.get 0) (local.get 1)))
 *     (func (export "add") (param i32 i32) (result i32) (i32.atomic.rmw.add (local.get 0) (local.get 1))))
 *
 * Addresses are byte offsets (4-aligned).
 */
const FUNCS: [string, number, number[]][] = [
  ['load', 0, [0x20, 0, 0xfe, 0x10, 2, 0]],
  ['store', 1, [0x20, 0, 0x20, 1, 0xfe, 0x17, 2, 0]],
  ['add', 2, [0x20, 0, 0x20, 1, 0xfe, 0x1e, 2, 0]],
];
const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
  ...section(1, vector([[0x60, 1, I32, 1, I32], [0x60, 2, I32, I32, 0], [0x60, 2, I32, I32, 1, I32]])),
  ...section(2, vector([[...name('e'), ...name('m'), 0x02, 0x03, 1, 1]])),
  ...section(3, vector(FUNCS.map(([, type]) => [type]))),
  ...section(7, vector(FUNCS.map(([fn], i) => [...name(fn), 0x00, i]))),
  ...section(10, vector(FUNCS.map(([, , body]) => [...leb(body.length + 2), 0, ...body, 0x0b]))),
]);

export interface WasmAtomics {
  readonly words: Int32Array;
  load(byteAt: number): number;
  store(byteAt: number, v: number): void;
  add(byteAt: number, v: number): number;
}

/** The part of the WebAssembly JS API used here (Node has it as a global; the project's TypeScript lib leaves it out, as lib/tile/simd.ts says). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number; maximum: number; shared: boolean }) => { readonly buffer: SharedArrayBuffer };
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}

/** One shared WebAssembly memory of one page, its words as an Int32Array, and the module's three accesses to them. */
export function wasmAtomics(): WasmAtomics {
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const memory = new wasm.Memory({ initial: 1, maximum: 1, shared: true });
  const e = new wasm.Instance(new wasm.Module(MODULE), { e: { m: memory } }).exports as unknown as Omit<WasmAtomics, 'words'>;
  return { words: new Int32Array(memory.buffer), load: e.load, store: e.store, add: e.add };
}

/** Words touched: 256 of the page, one every 8 bytes. */
const SPAN = 255;

function jsLoad(w: Int32Array, n: number): number {
  let s = 0;
  for (let k = 0; k < n; k++) s += Atomics.load(w, (k & SPAN) << 1);
  return s;
}
function wasmLoad(a: WasmAtomics, n: number): number {
  let s = 0;
  for (let k = 0; k < n; k++) s += a.load((k & SPAN) << 3);
  return s;
}
function jsStore(w: Int32Array, n: number): number {
  for (let k = 0; k < n; k++) Atomics.store(w, (k & SPAN) << 1, k);
  return w[2];
}
function wasmStore(a: WasmAtomics, n: number): number {
  for (let k = 0; k < n; k++) a.store((k & SPAN) << 3, k);
  return a.words[2];
}
function jsAdd(w: Int32Array, n: number): number {
  let s = 0;
  for (let k = 0; k < n; k++) s += Atomics.add(w, (k & SPAN) << 1, 1);
  return s;
}
function wasmAdd(a: WasmAtomics, n: number): number {
  let s = 0;
  for (let k = 0; k < n; k++) s += a.add((k & SPAN) << 3, 1);
  return s;
}
function none(_w: Int32Array, n: number): number {
  let s = 0;
  for (let k = 0; k < n; k++) s += (k & SPAN) << 1;
  return s;
}

/** Nanoseconds an iteration of `f` takes over `n` iterations, the faster of two passes. */
function nsPerOp<T>(f: (x: T, n: number) => number, x: T, n: number): number {
  let best = Infinity;
  for (let pass = 0; pass < 2; pass++) {
    const t0 = process.hrtime.bigint();
    f(x, n);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / n);
  }
  return best;
}

function main(): void {
  const n = positive('atomics-cost', process.argv[2], 20, 'millions of accesses') * 1e6;
  const a = wasmAtomics();
  const w = a.words;
  const loop = nsPerOp(none, w, n);
  const rows: [string, number, number][] = [
    ['Atomics.load', nsPerOp(jsLoad, w, n), nsPerOp(wasmLoad, a, n)],
    ['Atomics.store', nsPerOp(jsStore, w, n), nsPerOp(wasmStore, a, n)],
    ['Atomics.add', nsPerOp(jsAdd, w, n), nsPerOp(wasmAdd, a, n)],
  ];
  console.log(`Node ${process.versions.node} (V8 ${process.versions.v8}), ${n / 1e6} M accesses a pass, ns an access (the faster of two passes); an empty loop: ${loop.toFixed(2)} ns`);
  for (const [what, js, wasm] of rows) console.log(`  ${what}: from JavaScript ${js.toFixed(2)}, through a WebAssembly function ${wasm.toFixed(2)} (${(wasm / js).toFixed(2)} of JavaScript's)`);
}

if (process.argv[1] !== undefined && new URL(import.meta.url).pathname === process.argv[1]) main();

// Runs on: executor threads. Owns: the one piece of tile arithmetic done in
// WebAssembly — f32 add with 128-bit SIMD — and the memories it works in.
//
// V8 does not vectorise JavaScript loops; the collectives' reductions spend
// most of their math in an elementwise f32 add (docs/benchmarks.md). A wasm
// function can only address its own linear memory, so tile slabs
// (lib/tile/slab.ts) are WebAssembly memories, each with its own instance of
// this module; tiles carry their slab and byte offset (lib/tile/tile.ts)
// because TypedArray.byteOffset costs ~40 ns per read in Node 20's V8.
//
// f32x4.add rounds each lane exactly as the scalar path does (a + b computed
// exactly, rounded once to f32), so both paths give the same bits for every
// finite or infinite input, and NaN payloads match when the caller passes the
// operands in the order lib/kernel/math.ts addTiles does; the choice of path
// depends on where tiles were allocated, which differs between thread layouts,
// and must not change results.

import { KernbenchError } from '../errors.js';

/**
 * The module, hand-assembled (no toolchain needed to rebuild it). Its text:
 *
 *   (module
 *     (import "e" "m" (memory 0))
 *     (func (export "a") (param $o i32) (param $x i32) (param $y i32) (param $n i32)
 *       (local $i i32)
 *       (block
 *         (br_if 0 (i32.eqz (local.get $n)))
 *         (loop
 *           (v128.store (i32.add (local.get $o) (local.get $i))
 *             (f32x4.add (v128.load (i32.add (local.get $x) (local.get $i)))
 *                        (v128.load (i32.add (local.get $y) (local.get $i)))))
 *           (br_if 0 (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 16)))
 *                              (local.get $n))))))
 *
 * $o, $x, $y are byte offsets and $n a byte count, a positive multiple of 16
 * (or 0). Loads and stores may be unaligned.
 */
const BODY = [
  0x01, 0x01, 0x7f, // one local: i32 ($i)
  0x02, 0x40, // block
  0x20, 0x03, 0x45, 0x0d, 0x00, //   br_if 0 (i32.eqz $n)
  0x03, 0x40, //   loop
  0x20, 0x00, 0x20, 0x04, 0x6a, //     $o + $i
  0x20, 0x01, 0x20, 0x04, 0x6a, 0xfd, 0x00, 0x00, 0x00, //     v128.load ($x + $i)
  0x20, 0x02, 0x20, 0x04, 0x6a, 0xfd, 0x00, 0x00, 0x00, //     v128.load ($y + $i)
  0xfd, 0xe4, 0x01, //     f32x4.add
  0xfd, 0x0b, 0x00, 0x00, //     v128.store
  0x20, 0x04, 0x41, 0x10, 0x6a, 0x22, 0x04, //     $i = $i + 16 (tee)
  0x20, 0x03, 0x49, 0x0d, 0x00, //     br_if 0 ($i <u $n)
  0x0b, //   end loop
  0x0b, // end block
  0x0b, // end func
];

/** `n` as an unsigned LEB128 number: how WebAssembly's binary format writes sizes and counts. */
export function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

/** A section of a WebAssembly module: its id, its size, its bytes. */
export const section = (id: number, bytes: number[]): number[] => [id, ...leb(bytes.length), ...bytes];

const MODULE_BYTES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // \0asm, version 1
  ...section(1, [0x01, 0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x00]), // type: (i32 i32 i32 i32) -> ()
  ...section(2, [0x01, 0x01, 0x65, 0x01, 0x6d, 0x02, 0x00, 0x00]), // import "e" "m": memory, min 0
  ...section(3, [0x01, 0x00]), // one function of type 0
  ...section(7, [0x01, 0x01, 0x61, 0x00, 0x00]), // export "a" = function 0
  ...section(10, [0x01, ...leb(BODY.length), ...BODY]),
]);

/** o[i] = x[i] + y[i] over `bytes` bytes at the given byte offsets of the memory (bytes a multiple of 16). */
export type AddF32x4 = (o: number, x: number, y: number, bytes: number) => void;

/** A WebAssembly memory of tile storage and the add that works in it (null where Node runs without WebAssembly). */
export interface SimdMemory {
  readonly buffer: ArrayBuffer;
  readonly add: AddF32x4 | null;
}

/**
 * The part of the WebAssembly JS API used here. Node has it as a global, but
 * TypeScript declares it only in the DOM libs, which this project leaves out.
 */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number; maximum: number }) => { readonly buffer: ArrayBuffer };
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: object | undefined;

const PAGE_BYTES = 65536;

/**
 * A fresh zeroed memory of `bytes` (a multiple of 64 KiB) with its own instance
 * of the add. Without WebAssembly (`node --jitless` turns it off) it is a plain
 * ArrayBuffer and `add` is null: tiles then take the scalar loop.
 */
export function simdMemory(bytes: number): SimdMemory {
  if (bytes % PAGE_BYTES !== 0) throw new KernbenchError('ERR_INTERNAL', `simdMemory: bytes must be a multiple of ${PAGE_BYTES}, got ${bytes}`);
  if (wasm === undefined) return { buffer: new ArrayBuffer(bytes), add: null };
  compiled ??= new wasm.Module(MODULE_BYTES);
  const pages = bytes / PAGE_BYTES;
  const memory = new wasm.Memory({ initial: pages, maximum: pages });
  const instance = new wasm.Instance(compiled, { e: { m: memory } });
  return { buffer: memory.buffer, add: instance.exports.a as AddF32x4 };
}

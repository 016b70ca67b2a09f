// Runs on: any thread. Owns: the bf16 codec and bf16 rounding. A bf16 is the
// top 16 bits of an f32 (sign, 8 exponent bits, 7 mantissa bits), so decoding
// is a shift and encoding is integer round-to-nearest-even on the low 16 bits.
//
// Decoding shifts through a Uint32Array instead of reading a 65536-entry
// table: 4.9 us vs 8.2 us per 4096 elements (Node 20, best of 20 batches; the
// bench script is handed in with lib/dtype), exact for NaN payloads, and no
// 256 KiB table.
import { f32BitsRoundToOdd, f32FromBits } from './f32-bits.js';

/**
 * bf16 bits of the f32 with bits `bits`, rounded to nearest, ties to even.
 * Subnormals round like normals (same exponent range as f32); overflow past
 * the largest bf16 (0x7F7F) rounds to infinity; NaN stays NaN with its sign and
 * top payload bits kept and the quiet bit set, so a NaN whose payload lives
 * only in the low 16 bits does not turn into infinity.
 */
export function bf16FromF32Bits(bits: number): number {
  if ((bits & 0x7fffffff) > 0x7f800000) return ((bits >>> 16) | 0x0040) & 0xffff;
  // Adding 0x7FFF carries into bit 16 exactly when the low half is above
  // 0x8000, or equal to it with bit 16 odd.
  return ((bits >>> 0) + 0x7fff + ((bits >>> 16) & 1)) >>> 16;
}

/**
 * Encode into bf16 bits. A Float32Array is read as bits (NaN payloads seen
 * exactly); other numbers are rounded once, from their exact value.
 */
export function encodeBf16(values: ArrayLike<number>, dst: Uint16Array): void {
  if (values instanceof Float32Array) {
    const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
    for (let i = 0; i < bits.length; i++) dst[i] = bf16FromF32Bits(bits[i]);
  } else {
    for (let i = 0; i < values.length; i++) dst[i] = bf16FromF32Bits(f32BitsRoundToOdd(values[i]));
  }
}

/** Decode bf16 bits into f32 values (written as bits, so NaN payloads survive). */
export function decodeBf16(src: Uint16Array, dst: Float32Array): void {
  const out = new Uint32Array(dst.buffer, dst.byteOffset, dst.length);
  for (let i = 0; i < src.length; i++) out[i] = src[i] << 16;
}

/** `x` rounded to the nearest bf16, ties to even. */
export function roundBf16(x: number): number {
  return f32FromBits(bf16FromF32Bits(f32BitsRoundToOdd(x)) << 16 >>> 0);
}

/** Round every element of `a` to bf16, in place. */
export function roundBf16Array(a: Float32Array): void {
  const bits = new Uint32Array(a.buffer, a.byteOffset, a.length);
  for (let i = 0; i < bits.length; i++) bits[i] = bf16FromF32Bits(bits[i]) << 16;
}

// Runs on: any thread. Owns: the f16 (IEEE 754 binary16) codec: a lazily built
// 65536-entry decode table and a fast encoder from f32 bits.
//
// @petamoriken/float16 is the reference for f16 in kernbench: the decode table
// is built *by* the library, scalar rounding (`roundTo`) *is* the library's
// f16round, and this encoder matches the library bit for bit
// (test/dtype.test.ts compares 1e6 random f32 bit patterns, every f16 value,
// every midpoint and their f32 neighbours, and random doubles; a one-off run
// compared all 2^32 f32 bit patterns). NaN is decided from the bits, not left
// to the engine: a signaling NaN becomes quiet and keeps its sign and top
// payload bits, as an IEEE conversion does (and as the library ends up doing
// on V8, which quiets a signaling NaN when it loads it as a number).
//
// Why not encode with the library: on Node 20 it is ~35x slower. Per 4096
// elements (best of 20 batches; the bench script is handed in with lib/dtype):
// library Float16Array#set 780 us, library setFloat16 6000 us; this encoder
// 22 us from a Float32Array, 67 us from a number[] of doubles.
import { Float16Array } from '@petamoriken/float16';
import { f32BitsRoundToOdd } from './f32-bits.js';

let decodeTable: Float32Array | undefined;

/** f16 bits -> f32 value, for all 65536 bit patterns. Built by the library on first use (~45 ms). */
export function f16DecodeTable(): Float32Array {
  if (decodeTable === undefined) {
    const bits = new Uint16Array(65536);
    for (let i = 0; i < bits.length; i++) bits[i] = i;
    decodeTable = new Float32Array(new Float16Array(bits.buffer));
  }
  return decodeTable;
}

// Thresholds on f32 bits with the sign cleared.
const F32_INF = 0x7f800000;
/** 65520 = 65504 + half an ulp: a tie, and 0x7BFF is odd, so 65520 and above overflow. */
const F32_F16_OVERFLOW = 0x477ff000;
/** 2^-14, the smallest normal f16. */
const F32_F16_MIN_NORMAL = 0x38800000;
/** 2^-25, half the smallest subnormal f16: it ties to even (zero), and below it is zero. */
const F32_F16_HALF_MIN_SUBNORMAL = 0x33000000;
/** Exponent bias 127 -> 15 as an offset on f32 bits: (127 - 15) << 23. */
const REBIAS = 112 << 23;
const F16_INF = 0x7c00;
/** Exponent all ones plus the quiet bit (the top mantissa bit). */
const F16_QUIET_NAN = 0x7e00;

/** f16 bits of the f32 with bits `bits`, rounded to nearest, ties to even. */
export function f16FromF32Bits(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const a = bits & 0x7fffffff;
  if (a >= F32_F16_OVERFLOW) {
    // NaN: keep the top 10 payload bits and force the quiet bit, so no NaN
    // becomes infinity. Quiet NaNs (all NaNs JS arithmetic makes) already
    // have that bit, so for them this is the library's result.
    if (a > F32_INF) return sign | F16_QUIET_NAN | ((a >>> 13) & 0x3ff);
    return sign | F16_INF;
  }
  if (a >= F32_F16_MIN_NORMAL) {
    // Rebias the exponent, then drop 13 mantissa bits with RNE; a carry out of
    // the mantissa correctly bumps the exponent.
    const r = a - REBIAS;
    return sign | ((r + 0xfff + ((r >>> 13) & 1)) >>> 13);
  }
  if (a < F32_F16_HALF_MIN_SUBNORMAL) return sign;
  // Subnormal f16, value q * 2^-24. The f32 is m * 2^(e - 150) with its
  // implicit bit restored, so q = m >> (126 - e), a shift in [14, 24].
  const e = a >>> 23;
  const m = (a & 0x7fffff) | 0x800000;
  const shift = 126 - e;
  const q = m >>> shift;
  const rest = m & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  return sign | (rest > half || (rest === half && (q & 1) === 1) ? q + 1 : q);
}

/**
 * Encode into f16 bits. A Float32Array is read as bits; other numbers are
 * rounded once, from their exact value (see f32-bits.ts).
 */
export function encodeF16(values: ArrayLike<number>, dst: Uint16Array): void {
  if (values instanceof Float32Array) {
    const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
    for (let i = 0; i < bits.length; i++) dst[i] = f16FromF32Bits(bits[i]);
  } else {
    for (let i = 0; i < values.length; i++) dst[i] = f16FromF32Bits(f32BitsRoundToOdd(values[i]));
  }
}

/** Decode f16 bits to values. */
export function decodeF16(src: Uint16Array, dst: Float32Array | Float64Array): void {
  const table = f16DecodeTable();
  for (let i = 0; i < src.length; i++) dst[i] = table[src[i]];
}

/** Round every element of `a` to f16, in place. */
export function roundF16Array(a: Float32Array): void {
  const table = f16DecodeTable();
  const bits = new Uint32Array(a.buffer, a.byteOffset, a.length);
  for (let i = 0; i < a.length; i++) a[i] = table[f16FromF32Bits(bits[i])];
}

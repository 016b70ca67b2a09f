// Runs on: any thread. Owns: rounding numbers to the precision of a dtype.
// Kernels call these after every arithmetic op so that an f32 computation
// carries exactly the values the dtype could hold. `roundTo(dt, x)` equals
// decoding what `encode(dt, [x])` wrote, for every x (and i32 in range).
import { f16round } from '@petamoriken/float16';
import { roundBf16, roundBf16Array } from './bf16.js';
import { type DType, unknownDType } from './dtypes.js';
import { roundF16Array } from './f16.js';

/**
 * `x` rounded to the nearest value of `dt`, ties to even (f32: Math.fround;
 * f16: the library's f16round; bf16: from the exact value of x). Overflow
 * gives infinity and NaN stays NaN.
 *
 * i32 follows `x | 0`, the two's-complement hardware model: truncate toward
 * zero, then wrap modulo 2^32 (2^31 -> -2^31); NaN and the infinities give 0.
 * Unlike `encode`, it never throws: it models an overflowing op, not a bad
 * argument.
 */
export function roundTo(dt: DType, x: number): number {
  switch (dt) {
    case 'f32':
      return Math.fround(x);
    case 'f16':
      return f16round(x);
    case 'bf16':
      return roundBf16(x);
    case 'i32':
      return x | 0;
    default:
      return unknownDType(dt);
  }
}

/**
 * Round every element of `a` to `dt` in place, like `roundTo` on each. For
 * i32 the wrapped integer is stored back into the f32 element, so integers
 * above 2^24 in magnitude round to the nearest f32.
 */
export function roundArray(dt: DType, a: Float32Array): void {
  switch (dt) {
    case 'f32':
      return; // Elements of a Float32Array are f32 already.
    case 'f16':
      return roundF16Array(a);
    case 'bf16':
      return roundBf16Array(a);
    case 'i32':
      for (let i = 0; i < a.length; i++) a[i] = a[i] | 0;
      return;
    default:
      return unknownDType(dt);
  }
}

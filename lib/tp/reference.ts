// Runs on: any thread (benches and tests, on the host). Owns: the plain-JS
// references the tensor-parallel kernels are checked against — a seeded
// generator for deterministic weights, a host matmul, and the rounding
// tolerances of each dtype. Nothing here touches the simulator.
import { roundArray, roundTo, type DType } from '../dtype/index.js';

/** Floating dtypes a GEMM can run in. */
export type FloatDType = Extract<DType, 'f32' | 'f16' | 'bf16'>;

/**
 * `n` values uniform in [lo, hi) from a 32-bit seed (mulberry32), rounded to
 * `dtype`, so the device (which stores `dtype`) and the reference see the
 * same numbers. The same seed always gives the same values.
 */
export function seededValues(seed: number, n: number, dtype: FloatDType, lo = -1, hi = 1): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    out[i] = lo + (hi - lo) * u;
  }
  roundArray(dtype, out);
  return out;
}

/**
 * x [m, k] @ w [k, n] (+ bias [n]) in f64, products summed in the order
 * p = 0..k-1 (the order tl.dot uses), not rounded. `absSum` holds
 * sum_p |x_ip * w_pj| + |bias_j| per element: the scale that rounding errors
 * inside the sum are proportional to (used by tolerances after cancellation).
 */
export function matmul(x: ArrayLike<number>, w: ArrayLike<number>, m: number, k: number, n: number, bias?: ArrayLike<number>): { value: Float64Array; absSum: Float64Array } {
  const value = new Float64Array(m * n);
  const absSum = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const a = x[i * k + p];
      for (let j = 0; j < n; j++) {
        const prod = a * w[p * n + j];
        value[i * n + j] += prod;
        absSum[i * n + j] += Math.abs(prod);
      }
    }
    if (bias) {
      for (let j = 0; j < n; j++) {
        value[i * n + j] += bias[j];
        absSum[i * n + j] += Math.abs(bias[j]);
      }
    }
  }
  return { value, absSum };
}

/** `values` rounded to `dtype` (a new array). */
export function rounded(dtype: FloatDType, values: ArrayLike<number>): Float32Array {
  return Float32Array.from(values, (v) => roundTo(dtype, v));
}

/** Explicit fraction bits and smallest normal exponent of each dtype. */
const FORMAT: Record<FloatDType, { fraction: number; minExp: number }> = {
  f16: { fraction: 10, minExp: -14 },
  bf16: { fraction: 7, minExp: -126 },
  f32: { fraction: 23, minExp: -126 },
};

/** Unit roundoff u of `dtype`: rounding to nearest changes a value by at most u times its magnitude (2^-11 for f16). */
export function unitRoundoff(dtype: FloatDType): number {
  return 2 ** -(FORMAT[dtype].fraction + 1);
}

/** One unit in the last place of `dtype` at magnitude |v| (subnormal spacing near zero). */
export function ulp(dtype: FloatDType, v: number): number {
  const { fraction, minExp } = FORMAT[dtype];
  const a = Math.abs(v);
  if (a === 0 || !Number.isFinite(a)) return 2 ** (minExp - fraction);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  return 2 ** (Math.max(e, minExp) - fraction);
}

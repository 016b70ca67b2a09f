// Runs on: any thread (benches and tests, on the host). Owns: the
// single-device JS reference of the transformer layer (transformer-layer.ts)
// and seeded parameters for it. Values are computed in f64 and rounded to the
// layer's dtype where the device rounds them: at every kernel's store, and the
// attention probabilities before their product with v. Nothing here touches
// the simulator.
import type { TransformerLayerConfig, LayerParameters } from './transformer-layer.js';
import { matmul, rounded, seededValues, type FloatDType } from './reference.js';
import { NORM_EPS } from './layer-kernels.js';

/** Seeded full parameters (nn.Linear's U(-1/sqrt(fan_in), 1/sqrt(fan_in)); norm weights near 1), rounded to dtype. */
export function layerParameters(c: TransformerLayerConfig, seed: number): LayerParameters {
  const { hiddenSize: h, numAttentionHeads: nq, numQueryGroups: nkv, ffnHiddenSize: f, dtype } = c;
  const d = h / nq;
  let k = seed;
  const u = (n: number, fanIn: number) => seededValues(k++, n, dtype, -1 / Math.sqrt(fanIn), 1 / Math.sqrt(fanIn));
  const maybe = (n: number, fanIn: number) => (c.addBias ? u(n, fanIn) : (k++, null));
  const layerNorm = c.normalization === 'LayerNorm';
  return {
    ln1Weight: seededValues(k++, h, dtype, 0.8, 1.2),
    ln1Bias: layerNorm ? seededValues(k++, h, dtype, -0.1, 0.1) : (k++, null),
    wq: u(h * nq * d, h),
    wk: u(h * nkv * d, h),
    wv: u(h * nkv * d, h),
    bq: maybe(nq * d, h),
    bk: maybe(nkv * d, h),
    bv: maybe(nkv * d, h),
    wo: u(nq * d * h, nq * d),
    bo: maybe(h, nq * d),
    ln2Weight: seededValues(k++, h, dtype, 0.8, 1.2),
    ln2Bias: layerNorm ? seededValues(k++, h, dtype, -0.1, 0.1) : (k++, null),
    w1: u(h * f, h),
    b1: maybe(f, h),
    w1Up: c.activation === 'swiglu' ? u(h * f, h) : (k++, null),
    b1Up: c.activation === 'swiglu' ? maybe(f, h) : (k++, null),
    w2: u(f * h, f),
    b2: maybe(h, f),
  };
}

/** The layer's input x [s b, h] (row = position * b + sequence), rounded to dtype. */
export function layerInput(c: TransformerLayerConfig, seed: number): Float32Array {
  return seededValues(seed, c.seqLength * c.microBatchSize * c.hiddenSize, c.dtype);
}

/** y = layer(x) on one device, [s b, h]. */
export function layerReference(c: TransformerLayerConfig, p: LayerParameters, x: Float32Array): Float32Array {
  const dt = c.dtype;
  const { hiddenSize: h, numAttentionHeads: nq, numQueryGroups: nkv, ffnHiddenSize: f, seqLength: s, microBatchSize: b } = c;
  const d = h / nq;
  const rows = s * b;
  const lin = (a: ArrayLike<number>, w: Float32Array, k: number, n: number, bias: Float32Array | null) => rounded(dt, matmul(a, w, rows, k, n, bias ?? undefined).value);
  const ln1 = normRef(c, x, p.ln1Weight, p.ln1Bias);
  const q = lin(ln1, p.wq, h, nq * d, p.bq);
  const kk = lin(ln1, p.wk, h, nkv * d, p.bk);
  const v = lin(ln1, p.wv, h, nkv * d, p.bv);
  const ctx = attentionRef(dt, q, kk, v, s, b, nq, nkv, d);
  const proj = lin(ctx, p.wo, nq * d, h, p.bo);
  const mid = rounded(dt, Float64Array.from(x, (xi, i) => xi + proj[i]));
  const ln2 = normRef(c, mid, p.ln2Weight, p.ln2Bias);
  let act: Float32Array;
  if (c.activation === 'gelu') {
    const a = lin(ln2, p.w1, h, f, p.b1);
    const k0 = Math.sqrt(2 / Math.PI);
    act = rounded(dt, Float64Array.from(a, (t) => 0.5 * t * (1 + Math.tanh(k0 * (t + 0.044715 * t * t * t)))));
  } else {
    const gate = lin(ln2, p.w1, h, f, p.b1);
    const up = lin(ln2, p.w1Up as Float32Array, h, f, p.b1Up);
    act = rounded(dt, Float64Array.from(gate, (g, i) => (g / (1 + Math.exp(-g))) * up[i]));
  }
  const down = lin(act, p.w2, f, h, p.b2);
  return rounded(dt, Float64Array.from(mid, (m, i) => m + down[i]));
}

function normRef(c: TransformerLayerConfig, x: Float32Array, w: Float32Array, bias: Float32Array | null): Float32Array {
  const h = c.hiddenSize;
  const rows = x.length / h;
  const out = new Float64Array(x.length);
  for (let r = 0; r < rows; r++) {
    const row = x.subarray(r * h, (r + 1) * h);
    const mean = c.normalization === 'LayerNorm' ? row.reduce((a, v) => a + v, 0) / h : 0;
    const ms = row.reduce((a, v) => a + (v - mean) * (v - mean), 0) / h;
    const rstd = 1 / Math.sqrt(ms + NORM_EPS);
    for (let j = 0; j < h; j++) out[r * h + j] = (row[j] - mean) * rstd * w[j] + (bias ? bias[j] : 0);
  }
  return rounded(c.dtype, out);
}

/** Causal attention per sequence and query head; query head i reads key/value group i / (nq / nkv). */
function attentionRef(dt: FloatDType, q: Float32Array, k: Float32Array, v: Float32Array, s: number, b: number, nq: number, nkv: number, d: number): Float32Array {
  const out = new Float64Array(s * b * nq * d);
  const scale = 1 / Math.sqrt(d);
  const perGroup = nq / nkv;
  const scores = new Float64Array(s);
  for (let seq = 0; seq < b; seq++) {
    for (let i = 0; i < nq; i++) {
      const g = Math.floor(i / perGroup);
      for (let a = 0; a < s; a++) {
        const qRow = (a * b + seq) * nq * d + i * d;
        let max = -Infinity;
        for (let j = 0; j <= a; j++) {
          const kRow = (j * b + seq) * nkv * d + g * d;
          let dot = 0;
          for (let e = 0; e < d; e++) dot += q[qRow + e] * k[kRow + e];
          scores[j] = Math.fround(dot * scale);
          max = Math.max(max, scores[j]);
        }
        let sum = 0;
        for (let j = 0; j <= a; j++) sum += (scores[j] = Math.exp(scores[j] - max));
        const probs = rounded(dt, scores.subarray(0, a + 1).map((e) => e / sum));
        for (let e = 0; e < d; e++) {
          let acc = 0;
          for (let j = 0; j <= a; j++) acc += probs[j] * v[(j * b + seq) * nkv * d + g * d + e];
          out[qRow + e] = acc;
        }
      }
    }
  }
  return rounded(dt, out);
}

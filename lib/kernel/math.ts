// Runs on: executor threads. Owns: the arithmetic of kernel tiles — exact f32
// computation followed by one rounding into the result dtype — with no notion
// of time. lib/kernel/context.ts charges each op's cost and wraps these.
import { roundArray, type DType } from '../dtype/index.js';
import { KernbenchError, type ErrorCode } from '../errors.js';
import { allocF32, type KernelRun } from '../tile/slab.js';
import { Tile } from '../tile/tile.js';

export type Operand = Tile | number;

function fail(code: ErrorCode, message: string): KernbenchError {
  return new KernbenchError(code, message);
}

/**
 * o[i] = x[i] + y[i] for every i of o (x and y at least as long), in index
 * order, so o may be x or y. Unrolled by four: V8 does not vectorise, and the
 * collectives' reductions spend most of their math here (measured ~1.6x over
 * the plain loop on 256-element chunks).
 */
export function addInto(x: Float32Array, y: Float32Array, o: Float32Array): void {
  const n = o.length;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    o[i] = x[i] + y[i];
    o[i + 1] = x[i + 1] + y[i + 1];
    o[i + 2] = x[i + 2] + y[i + 2];
    o[i + 3] = x[i + 3] + y[i + 3];
  }
  for (; i < n; i++) o[i] = x[i] + y[i];
}

/**
 * o[i] = x[xAt + i] + o[i] for every i of o: addInto of x's elements from xAt
 * with o as y and as the result, without a view of x (a ring step's reduction
 * into its scratch tile; decision 0195). The same order of operands, so the same
 * bits as addInto on that view.
 */
export function addFrom(x: Float32Array, xAt: number, o: Float32Array): void {
  const n = o.length;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    o[i] = x[xAt + i] + o[i];
    o[i + 1] = x[xAt + i + 1] + o[i + 1];
    o[i + 2] = x[xAt + i + 2] + o[i + 2];
    o[i + 3] = x[xAt + i + 3] + o[i + 3];
  }
  for (; i < n; i++) o[i] = x[xAt + i] + o[i];
}

/** Whether byte ranges [a, a + bytes) and [b, b + bytes) are the same range or disjoint. */
const sameOrApart = (a: number, b: number, bytes: number): boolean => a === b || a + bytes <= b || b + bytes <= a;

/**
 * o = x + y elementwise (all three the same size; o may be x or y). In one
 * slab, and with o not partly overlapping an input, the SIMD add does every
 * whole group of four and the loop the rest; otherwise addInto does it all.
 * Both give the same bits (lib/tile/simd.ts).
 */
export function addTiles(x: Tile, y: Tile, o: Tile): void {
  const s = o.slab;
  const n = o.size;
  const whole = n & ~3;
  const add = s === null ? null : s.add;
  if (add !== null && x.slab === s && y.slab === s && whole !== 0) {
    const bytes = whole << 2;
    if (sameOrApart(o.at, x.at, bytes) && sameOrApart(o.at, y.at, bytes)) {
      // y first: when both lanes are NaN, x86 keeps the first operand's payload, and the scalar
      // loop (V8's addsd) keeps y's; a + b is otherwise commutative, signed zeros included.
      add(o.at, y.at, x.at, bytes);
      const od = o.data;
      const xd = x.data;
      const yd = y.data;
      for (let i = whole; i < n; i++) od[i] = xd[i] + yd[i];
      return;
    }
  }
  addInto(x.data, y.data, o.data);
}

/** The tile that fixes shape and dtype of an elementwise op (the first tile operand). */
function lead(op: string, xs: Operand[]): Tile {
  const t = xs.find((x): x is Tile => x instanceof Tile);
  if (!t) throw fail('ERR_INVALID_ARG_TYPE', `${op}: needs at least one tile operand, got only scalars`);
  for (const x of xs) {
    if (x instanceof Tile && x.size !== t.size) throw fail('ERR_TILE_MISMATCH', `${op}: operand sizes differ, got ${t.size} and ${x.size} elements`);
  }
  return t;
}

const at = (x: Operand, i: number): number => (typeof x === 'number' ? x : x.data[i]);

/** Elementwise op over tiles and scalars; the result (tile memory of kernel run `run`) has the lead tile's shape and dtype. */
export function elementwise(op: string, xs: Operand[], f: (...v: number[]) => number, run: KernelRun | undefined): Tile {
  const t = lead(op, xs);
  const out = allocF32(t.size, run);
  const n = t.size;
  if (xs.length === 2) {
    const [a, b] = xs;
    for (let i = 0; i < n; i++) out[i] = f(at(a, i), at(b, i));
  } else {
    const v = new Array<number>(xs.length);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < xs.length; j++) v[j] = at(xs[j], i);
      out[i] = f(...v);
    }
  }
  roundArray(t.dtype, out);
  return new Tile(t.dtype, t.shape, out);
}

/** Softmax along the last axis (rows of a 2-D tile, or the whole 1-D tile), max-subtracted for stability; the result is tile memory of kernel run `run`. */
export function softmax(x: Tile, run: KernelRun | undefined): Tile {
  const cols = x.shape[x.shape.length - 1];
  const rows = x.size / cols;
  const out = allocF32(x.size, run);
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let m = -Infinity;
    for (let c = 0; c < cols; c++) m = Math.max(m, x.data[o + c]);
    let sum = 0;
    for (let c = 0; c < cols; c++) {
      const e = Math.exp(x.data[o + c] - m);
      out[o + c] = e;
      sum += e;
    }
    for (let c = 0; c < cols; c++) out[o + c] /= sum;
  }
  roundArray(x.dtype, out);
  return new Tile(x.dtype, x.shape, out);
}

/** [M, K] @ [K, N] -> [M, N], products accumulated in f64 and rounded once to `outDtype` (f32 by default, as Triton's dot); the result is tile memory of kernel run `run`. */
export function dot(a: Tile, b: Tile, run: KernelRun | undefined, outDtype: DType = 'f32'): Tile {
  if (a.shape.length !== 2 || b.shape.length !== 2) throw fail('ERR_INVALID_SHAPE', `dot takes 2-D tiles, got shapes [${a.shape.join(', ')}] and [${b.shape.join(', ')}]`);
  const [m, k] = a.shape;
  const [k2, n] = b.shape;
  if (k !== k2) throw fail('ERR_TILE_MISMATCH', `dot: inner dimensions differ, got [${m}, ${k}] @ [${k2}, ${n}]`);
  const out = allocF32(m * n, run);
  const acc = new Float64Array(n);
  for (let i = 0; i < m; i++) {
    acc.fill(0);
    for (let p = 0; p < k; p++) {
      const av = a.data[i * k + p];
      if (av === 0) continue;
      const row = p * n;
      for (let j = 0; j < n; j++) acc[j] += av * b.data[row + j];
    }
    for (let j = 0; j < n; j++) out[i * n + j] = acc[j];
  }
  roundArray(outDtype, out);
  return new Tile(outDtype, [m, n], out);
}

/** Integer ceiling division (Triton's tl.cdiv). */
export function cdiv(a: number, b: number): number {
  if (!Number.isInteger(a) || !Number.isInteger(b) || b <= 0) throw fail('ERR_OUT_OF_RANGE', `cdiv takes integers with b > 0, got ${a} and ${b}`);
  return Math.floor((a + b - 1) / b);
}

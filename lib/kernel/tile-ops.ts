// Runs on: executor threads. Owns: the math half of `tl` (./context.ts extends
// it): tiles of zeros, elementwise ops, reductions, softmax, dot and dtype
// conversion, each charged its modelled cost on the vector or matrix unit.
// What the result holds is the data mode's (./values.ts, chosen once here);
// the cost is the same in both modes, so virtual times do not depend on it.
import type { DType } from '../dtype/index.js';
import type { ErrorCode, KernbenchError } from '../errors.js';
import type { CostModel } from '../topology/cost-model.js';
import type { KernelRun } from '../tile/slab.js';
import { Tile, shapeSize, toShape } from '../tile/tile.js';
import { cdiv, type Operand } from './math.js';
import { valuesFor, type Values } from './values.js';

export abstract class TileOps {
  /** What this kernel's tiles hold, in the plan's data mode. */
  protected readonly values: Values;

  constructor(
    protected readonly costs: CostModel,
    noData: boolean,
    /** This kernel run's identity: the tile memory it makes is its own (lib/tile/slab.ts). */
    protected readonly run: KernelRun | undefined,
  ) {
    this.values = valuesFor(noData, run, (op, out, dtype, count) => this.checkOut(op, out, dtype, count));
  }

  /** @internal Advance this flow's clock by a local op's cost. */
  abstract advance(ps: number, op?: string): void;

  /** The kernel's error: names the kernel, its PE and its virtual time. */
  abstract error(code: ErrorCode, message: string): KernbenchError;

  /** A tile of zeros (in timing-only mode, a tile whose values are unspecified). */
  zeros(shape: number | readonly number[], dtype: DType): Tile {
    const sh = toShape(shape);
    return this.values.newTile(dtype, sh, shapeSize(sh));
  }

  /**
   * Elementwise a + b (tiles or scalars), rounded to the lead tile's dtype. With
   * `out` (same size and dtype as the result; it may be `a` or `b`), the result
   * is written there and `out` returned, instead of a new tile.
   */
  add(a: Operand, b: Operand, out?: Tile): Tile {
    // Two tiles of one size (the collectives' hot path), or timing-only into `out`.
    const r = this.values.add(a, b, out);
    if (r !== null) return this.vector(r);
    return this.into('add', this.vector(this.values.elementwise('add', [a, b], (x, y) => x + y)), out);
  }

  /** Copy a computed result into `out` when one was given. */
  private into(op: string, r: Tile, out: Tile | undefined): Tile {
    if (!out) return r;
    this.checkOut(op, out, r.dtype, r.size);
    this.values.copy(r, out);
    return out;
  }
  sub(a: Operand, b: Operand): Tile {
    return this.vector(this.values.elementwise('sub', [a, b], (x, y) => x - y));
  }
  mul(a: Operand, b: Operand): Tile {
    return this.vector(this.values.elementwise('mul', [a, b], (x, y) => x * y));
  }
  div(a: Operand, b: Operand): Tile {
    return this.vector(this.values.elementwise('div', [a, b], (x, y) => x / y));
  }
  maximum(a: Operand, b: Operand): Tile {
    return this.vector(this.values.elementwise('maximum', [a, b], (x, y) => Math.max(x, y)));
  }
  minimum(a: Operand, b: Operand): Tile {
    return this.vector(this.values.elementwise('minimum', [a, b], (x, y) => Math.min(x, y)));
  }
  /** a * b + c with one rounding (fused). */
  fma(a: Operand, b: Operand, c: Operand): Tile {
    return this.vector(this.values.elementwise('fma', [a, b, c], (x, y, z) => x * y + z));
  }
  clamp(x: Tile, lo: Operand, hi: Operand): Tile {
    return this.vector(this.values.elementwise('clamp', [x, lo, hi], (v, l, h) => Math.min(Math.max(v, l), h)));
  }
  /** a * s for a scalar s. */
  scale(a: Tile, s: number): Tile {
    return this.mul(a, s);
  }
  /** Softmax along the last axis; costs a few vector passes (max, exp-sum, divide). */
  softmax(x: Tile): Tile {
    const out = this.values.softmax(x);
    this.advance(3 * this.costs.vectorPs(x.size), 'softmax');
    return out;
  }
  /** Matrix product [M, K] @ [K, N] on the matrix unit, accumulated in f32 (Triton's tl.dot). */
  dot(a: Tile, b: Tile): Tile {
    const out = this.values.dot(a, b);
    this.advance(this.costs.gemmPs(a.shape[0], b.shape[1], a.shape[1], a.dtype === 'f32'), 'dot');
    return out;
  }
  /** Integer ceiling division. */
  cdiv(a: number, b: number): number {
    return cdiv(a, b);
  }
  /** The tile converted to another dtype (rounded once). */
  to(x: Tile, dtype: DType): Tile {
    const out = this.values.convert(x, dtype);
    this.advance(this.costs.vectorPs(x.size), 'convert');
    return out;
  }

  /** Elementwise reduction by a collective's op (sum, prod, min, max); `out` as for `add`. */
  reduce(op: 'sum' | 'prod' | 'min' | 'max', a: Tile, b: Tile, out?: Tile): Tile {
    switch (op) {
      case 'sum':
        return this.add(a, b, out);
      case 'prod':
        return this.into('prod', this.mul(a, b), out);
      case 'min':
        return this.into('min', this.minimum(a, b), out);
      case 'max':
        return this.into('max', this.maximum(a, b), out);
      default: {
        const never: never = op;
        throw this.error('ERR_INVALID_ARG_VALUE', `unknown reduction, got '${String(never)}'`);
      }
    }
  }

  /**
   * @internal A ring step's reduction (lib/ccl/steps.ts): `into` becomes
   * op(elements [at, at + into.size) of `a`, into), what reduce(op, view, into,
   * into) gives for that view of `a`, at the same cost; a sum cuts no view
   * (decision 0195). `staging`: a tile of into's size on into's slab for the sum's SIMD
   * add to copy a's elements to (decision 0216); its values are then unspecified.
   */
  reduceAt(op: 'sum' | 'prod' | 'min' | 'max', a: Tile, at: number, into: Tile, staging?: Tile): Tile {
    if (op !== 'sum') return this.reduce(op, a.slice(at, into.size), into, into);
    this.checkOut('add', into, a.dtype, into.size);
    if (at < 0 || at + into.size > a.size) throw this.error('ERR_INDEX_OUT_OF_RANGE', `reduceAt: elements [${at}, ${at + into.size}) must lie inside the tile's ${a.size}, got ${at} + ${into.size}`);
    this.values.addAt(a, at, into, staging);
    return this.vector(into);
  }

  /** Charge a vector-unit op on the result's elements. */
  private vector(out: Tile): Tile {
    this.advance(this.costs.vectorPs(out.size), 'vector');
    return out;
  }

  /** An `out` tile must hold exactly the result: `count` elements of `dtype`. */
  protected checkOut(op: string, out: Tile, dtype: DType, count: number): void {
    if (!(out instanceof Tile) || out.dtype !== dtype || out.size !== count) {
      const got = out instanceof Tile ? `a ${out.dtype} tile of ${out.size} elements` : typeof out;
      throw this.error('ERR_TILE_MISMATCH', `${op}: out must be a ${dtype} tile of ${count} elements, got ${got}`);
    }
  }
}

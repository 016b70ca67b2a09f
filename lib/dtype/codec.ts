// Runs on: any thread. Owns: moving tensor elements between raw little-endian
// bytes (often a view on a SharedArrayBuffer) and JS numbers: `decode`,
// `decodeToNumbers`, `encode`, and `encodeDecode` (the round trip, with no
// bytes between). Validates its arguments; the per-format work is
// in f16.ts and bf16.ts.
//
// Bytes are read and written with plain typed-array accesses, not Atomics: a
// caller that shares the buffer with another thread must order these accesses
// with its own Atomics doorbell (a counter published after the bytes).
//
// A view whose byteOffset is not a multiple of the element size cannot carry a
// Uint16Array/Int32Array/Float32Array, so its bytes go through one aligned
// scratch buffer owned by this module (grown on demand, never shrunk; the
// calls are synchronous, so one scratch per thread is enough).
import { KernbenchError } from '../errors.js';
import { decodeBf16, encodeBf16, roundBf16Array } from './bf16.js';
import { bytesPerElement, type DType, unknownDType } from './dtypes.js';
import { decodeF16, encodeF16, roundF16Array } from './f16.js';
import { f32BitsRoundToOdd } from './f32-bits.js';

// Typed arrays use host byte order and storage is little-endian. Every platform
// Node 20 ships for is little-endian; refuse to run silently wrong elsewhere.
if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
  throw new KernbenchError('ERR_INTERNAL', 'kernbench stores tensors little-endian and needs a little-endian host; received a big-endian one');
}

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

let scratch = new ArrayBuffer(0);

/** Bytes of length `byteLength` at offset 0 of the scratch buffer. */
function scratchBytes(byteLength: number): Uint8Array {
  if (scratch.byteLength < byteLength) scratch = new ArrayBuffer(Math.max(byteLength, 2 * scratch.byteLength));
  return new Uint8Array(scratch, 0, byteLength);
}

/** `src` itself when aligned for `dt`, else a copy of it in the scratch buffer. */
function alignedSource(dt: DType, src: Uint8Array): Uint8Array {
  if (src.byteOffset % bytesPerElement(dt) === 0) return src;
  const copy = scratchBytes(src.byteLength);
  copy.set(src);
  return copy;
}

/** Element count of `src`, which must hold whole elements of `dt`. */
function elementCount(fn: string, dt: DType, src: Uint8Array): number {
  const size = bytesPerElement(dt);
  if (src.byteLength % size !== 0) {
    throw new KernbenchError('ERR_PARTIAL_ELEMENT', `${fn}('${dt}'): src.byteLength must be a multiple of ${size}; received ${src.byteLength}`);
  }
  return src.byteLength / size;
}

/**
 * Read the elements in `src` (little-endian bytes of `dt`, any byte offset) as
 * f32 values. Writes into `out` when given (it must have exactly one slot per
 * element and must not overlap `src`) and returns it; otherwise returns a new
 * array that does not alias `src`. i32 values above 2^24 in magnitude round to
 * the nearest f32: use `decodeToNumbers` for exact integers.
 * Throws ERR_PARTIAL_ELEMENT on a partial element, ERR_INVALID_BUFFER_SIZE on
 * a wrongly sized `out`.
 */
export function decode(dt: DType, src: Uint8Array, out?: Float32Array): Float32Array {
  const n = elementCount('decode', dt, src);
  const dst = out ?? new Float32Array(n);
  if (dst.length !== n) {
    throw new KernbenchError('ERR_INVALID_BUFFER_SIZE', `decode('${dt}'): out must have ${n} elements, one per element of src; received ${dst.length}`);
  }
  const bytes = alignedSource(dt, src);
  switch (dt) {
    case 'f32':
      dst.set(new Float32Array(bytes.buffer, bytes.byteOffset, n));
      break;
    case 'f16':
      decodeF16(new Uint16Array(bytes.buffer, bytes.byteOffset, n), dst);
      break;
    case 'bf16':
      decodeBf16(new Uint16Array(bytes.buffer, bytes.byteOffset, n), dst);
      break;
    case 'i32':
      dst.set(new Int32Array(bytes.buffer, bytes.byteOffset, n));
      break;
    default:
      unknownDType(dt);
  }
  return dst;
}

/**
 * Read the elements in `src` as exact numbers: every f32, f16, bf16 and i32
 * value is representable in an f64. Returns a new array.
 * Throws ERR_PARTIAL_ELEMENT on a partial element.
 */
export function decodeToNumbers(dt: DType, src: Uint8Array): Float64Array {
  const n = elementCount('decodeToNumbers', dt, src);
  const out = new Float64Array(n);
  const bytes = alignedSource(dt, src);
  switch (dt) {
    case 'f32':
      out.set(new Float32Array(bytes.buffer, bytes.byteOffset, n));
      break;
    case 'f16':
      decodeF16(new Uint16Array(bytes.buffer, bytes.byteOffset, n), out);
      break;
    case 'bf16': {
      const f32 = new Float32Array(n);
      decodeBf16(new Uint16Array(bytes.buffer, bytes.byteOffset, n), f32);
      out.set(f32);
      break;
    }
    case 'i32':
      out.set(new Int32Array(bytes.buffer, bytes.byteOffset, n));
      break;
    default:
      unknownDType(dt);
  }
  return out;
}

/**
 * Write `values` into `dst` as little-endian `dt` elements (any byte offset).
 * f32, f16 and bf16 round to nearest, ties to even, once from each value's
 * exact number; overflow gives infinity, NaN stays NaN. i32 accepts only
 * integers in [-2^31, 2^31 - 1].
 * Throws before writing anything: ERR_INVALID_BUFFER_SIZE when `dst` does not
 * hold exactly `values.length` elements, ERR_OUT_OF_RANGE when an i32 value is
 * out of range or not an integer.
 */
export function encode(dt: DType, values: ArrayLike<number>, dst: Uint8Array): void {
  const size = bytesPerElement(dt);
  const n = values.length;
  if (dst.byteLength !== n * size) {
    throw new KernbenchError(
      'ERR_INVALID_BUFFER_SIZE',
      `encode('${dt}'): dst must hold ${n} elements (${n * size} bytes); received ${dst.byteLength} bytes`,
    );
  }
  if (dt === 'i32') checkInt32s(values);
  const aligned = dst.byteOffset % size === 0;
  const target = aligned ? dst : scratchBytes(dst.byteLength);
  switch (dt) {
    case 'f32':
      new Float32Array(target.buffer, target.byteOffset, n).set(values);
      break;
    case 'f16':
      encodeF16(values, new Uint16Array(target.buffer, target.byteOffset, n));
      break;
    case 'bf16':
      encodeBf16(values, new Uint16Array(target.buffer, target.byteOffset, n));
      break;
    case 'i32':
      new Int32Array(target.buffer, target.byteOffset, n).set(values);
      break;
    default:
      unknownDType(dt);
  }
  if (!aligned) dst.set(target);
}

/**
 * What `decode(dt, bytes, out)` gives after `encode(dt, values, bytes)`, with no
 * buffer of bytes between: each value rounded once to `dt`, stored in `out` as
 * f32 (a host tensor's values, lib/host/tensor.ts: one buffer, not a buffer of
 * bytes and a decoded copy). f16 and bf16 round from the f32 bits that encode
 * reads: a Float32Array's own, other numbers' rounded to odd (f32-bits.ts).
 * Throws as `encode`, before writing anything: ERR_INVALID_BUFFER_SIZE when
 * `out` does not have one slot per value, ERR_OUT_OF_RANGE for a bad i32.
 */
export function encodeDecode(dt: DType, values: ArrayLike<number>, out: Float32Array): Float32Array {
  const n = values.length;
  if (out.length !== n) {
    throw new KernbenchError('ERR_INVALID_BUFFER_SIZE', `encodeDecode('${dt}'): out must have ${n} elements, one per value; received ${out.length}`);
  }
  switch (dt) {
    case 'i32':
      checkInt32s(values);
      // As an Int32Array element, then to f32: -0 is stored as 0.
      for (let i = 0; i < n; i++) out[i] = values[i] | 0;
      break;
    case 'f32':
      out.set(values);
      break;
    case 'f16':
    case 'bf16': {
      if (values instanceof Float32Array) out.set(values);
      else {
        const bits = new Uint32Array(out.buffer, out.byteOffset, n);
        for (let i = 0; i < n; i++) bits[i] = f32BitsRoundToOdd(values[i]);
      }
      if (dt === 'f16') roundF16Array(out);
      else roundBf16Array(out);
      break;
    }
    default:
      unknownDType(dt);
  }
  return out;
}

function checkInt32s(values: ArrayLike<number>): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isInteger(v) || v < INT32_MIN || v > INT32_MAX) {
      throw new KernbenchError(
        'ERR_OUT_OF_RANGE',
        `encode('i32'): values[${i}] must be an integer in [${INT32_MIN}, ${INT32_MAX}]; received ${v}`,
      );
    }
  }
}

// Runs on: any thread. Owns: typed views over the raw storage of a tensor,
// for code that works on stored bits directly (copies, reductions in f32).
import { KernbenchError } from '../errors.js';
import { bytesPerElement, type DType, unknownDType } from './dtypes.js';

/** The typed array that carries `D`'s stored elements: values for f32 and i32, bit patterns for f16 and bf16. */
export type StorageView<D extends DType> = D extends 'f32' ? Float32Array : D extends 'i32' ? Int32Array : Uint16Array;

/**
 * A view of `length` elements of `dt` at `byteOffset` in `buf` (no copy).
 * Throws ERR_PARTIAL_ELEMENT when `byteOffset` is not a multiple of the
 * element size (use `decode`, which copies, for unaligned bytes) and
 * ERR_BUFFER_OUT_OF_BOUNDS when the elements do not fit in `buf`.
 */
export function viewOf<D extends DType>(dt: D, buf: ArrayBufferLike, byteOffset: number, length: number): StorageView<D> {
  const d: DType = dt;
  const size = bytesPerElement(d);
  if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || byteOffset % size !== 0) {
    throw new KernbenchError('ERR_PARTIAL_ELEMENT', `viewOf('${d}'): byteOffset must be a non-negative multiple of ${size}; received ${byteOffset}`);
  }
  if (!Number.isSafeInteger(length) || length < 0 || byteOffset + length * size > buf.byteLength) {
    throw new KernbenchError(
      'ERR_BUFFER_OUT_OF_BOUNDS',
      `viewOf('${d}'): ${length} elements at byte ${byteOffset} must fit in a buffer of ${buf.byteLength} bytes; received length ${length}`,
    );
  }
  switch (d) {
    case 'f32':
      return new Float32Array(buf, byteOffset, length) as StorageView<D>;
    case 'f16':
    case 'bf16':
      return new Uint16Array(buf, byteOffset, length) as StorageView<D>;
    case 'i32':
      return new Int32Array(buf, byteOffset, length) as StorageView<D>;
    default:
      return unknownDType(d);
  }
}

// Runs on: any thread. Owns: the closed list of tensor element types and their
// storage sizes. Every other dtype module switches over `DType` exhaustively.
import { KernbenchError } from '../errors.js';

/** Element types a tensor may hold. Bytes live little-endian in (Shared)ArrayBuffers. */
export const DTYPES = ['f32', 'f16', 'bf16', 'i32'] as const;
export type DType = (typeof DTYPES)[number];

/** Storage size of one element of `dt`, in bytes. */
export function bytesPerElement(dt: DType): number {
  switch (dt) {
    case 'f32':
    case 'i32':
      return 4;
    case 'f16':
    case 'bf16':
      return 2;
    default:
      return unknownDType(dt);
  }
}

export function isDType(x: unknown): x is DType {
  return typeof x === 'string' && (DTYPES as readonly string[]).includes(x);
}

/**
 * The `never` arm of every exhaustive switch over `DType`. Reached only when an
 * untyped caller passes a string that is not a dtype.
 */
export function unknownDType(dt: never): never {
  throw new KernbenchError('ERR_INVALID_DTYPE', `dtype must be one of ${DTYPES.join(', ')}; received ${JSON.stringify(dt)}`);
}

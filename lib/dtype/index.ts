// Runs on: any thread. The public face of lib/dtype: element types for tensors
// whose bytes live in (Shared)ArrayBuffers. Re-exports only.
export { DTYPES, type DType, bytesPerElement, isDType } from './dtypes.js';
export { decode, decodeToNumbers, encode, encodeDecode } from './codec.js';
export { roundTo, roundArray } from './round.js';
export { viewOf, type StorageView } from './view.js';

// Runs on: any thread. The `kernbench/kernel` entry point: what a kernel or a
// collective algorithm is written with. Re-exports only.
export { defineKernel, type Kernel, type KernelFn, type KernelRef } from '../kernel/define.js';
export { defineAlgorithm, type AlgorithmMeta, type ArrangementKind, type Provides } from '../ccl/define-algorithm.js';
export type { KernelContext, SendHandle, RecvFuture } from '../kernel/context.js';
export type { Peer } from '../kernel/ports.js';
export { Tile } from '../tile/tile.js';
export { DIRECTIONS, type Direction } from '../shm/layout.js';
export type { TensorDesc, ShardDesc, SpaceName } from '../shm/tensor-desc.js';
export type { DType } from '../dtype/index.js';
export { REDUCE_OPS, type ReduceOp } from '../ccl/reduce-op.js';
export { neighbourRank, shapeSize as worldSize, type WorldShape } from '../ccl/world.js';
export {
  Chunks,
  ScratchTiles,
  reductionOf,
  ringReduceScatter,
  ringAllGather,
  ringAllReduce,
  lineAllReduce,
  scaleChunk,
  sendDone,
  type Reduction,
  type RingLinks,
  type LineLinks,
} from '../ccl/steps.js';
/** zod, for an algorithm's `meta.params`: the same zod kernbench checks the schema with. */
export { z } from 'zod';
/** The tile helpers of the transformer layer's kernels (lib/tp/tile-ops.ts): layout ops and unary functions tl lacks. */
export { reshape, trans, broadcastCol, broadcastRow, rowsOf, putRows, colsOf, putCols, full, causalMask, unary } from '../tp/tile-ops.js';

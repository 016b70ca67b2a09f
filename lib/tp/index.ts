// Runs on: any thread. The public face of lib/tp (Megatron-style tensor
// parallelism). Re-exports only. Parallel state is a namespace, as Megatron's
// `parallel_state` module: parallelState.initializeModelParallel(torch, {...}).
export * as parallelState from './parallel-state.js';
export type { ModelParallelOptions } from './parallel-state.js';
export { ColumnParallelLinear, RowParallelLinear, ParallelLinearOptionsSchema, type ParallelLinearOptions } from './layers.js';
export { gemm, addBias } from './gemm-kernel.js';
export { seededValues, matmul, rounded, unitRoundoff, ulp, type FloatDType } from './reference.js';

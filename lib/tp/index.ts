// Runs on: any thread. The public face of lib/tp (Megatron-style tensor
// parallelism). Re-exports only. Parallel state is a namespace, as Megatron's
// `parallel_state` module: parallelState.initializeModelParallel(torch, {...}).
export * as parallelState from './parallel-state.js';
export type { ModelParallelOptions } from './parallel-state.js';
export { ColumnParallelLinear, RowParallelLinear, ParallelLinearOptionsSchema, type ParallelLinearOptions } from './layers.js';
export { gemm, addBias } from './gemm-kernel.js';
export { seededValues, matmul, rounded, unitRoundoff, ulp, type FloatDType } from './reference.js';
export { TransformerLayer, SelfAttention, Mlp, Norm, TransformerLayerOptionsSchema, layerConfig, type TransformerLayerOptions, type TransformerLayerConfig, type LayerParameters } from './transformer-layer.js';
export { norm, coreAttention, gelu, swiglu, residualAdd, NORM_EPS, type AttentionDims, type NormKind } from './layer-kernels.js';
export { reshape, trans, broadcastCol, broadcastRow, rowsOf, putRows, colsOf, putCols, full, causalMask, unary } from './tile-ops.js';
export { LayerTimeline, breakdown, type Span, type SpanKind, type Breakdown } from './timeline.js';
export { MODEL_PRESETS, PRESET_NAMES, type ModelPreset, type PresetName } from './presets.js';
export { layerParameters, layerInput, layerReference } from './layer-reference.js';

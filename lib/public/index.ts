// Runs on: a host thread (main, or a spawned rank's executor). The `kernbench`
// entry point: the PyTorch-shaped host API. Re-exports only.
export type { Torch, Multiprocessing, SpawnOptions, SpawnContext, SpawnTarget, SpawnArgs, SpawnResult, LaunchArgs } from '../host/torch.js';
export { Tensor, type TensorOptions, type HostArray } from '../host/tensor.js';
export { DPPolicy, SPLIT_MODES, type DPPolicyOptions, type SplitMode } from '../host/dp-policy.js';
export type { Work, CollectiveOptions } from '../host/distributed.js';
export { P2POp, type P2POpFunction, type SendOptions, type RecvOptions } from '../host/p2p.js';
export type { LaunchHandle } from '../host/host-runtime.js';
export { DTYPES, bytesPerElement, isDType, type DType } from '../dtype/index.js';
export { REDUCE_OPS, type ReduceOp } from '../ccl/reduce-op.js';
export {
  ERROR_CODES,
  USAGE_ERROR_CODES,
  KernbenchError,
  ConfigError,
  DeadlockError,
  AbortError,
  KernelError,
  SpawnError,
  type ErrorCode,
  type UsageErrorCode,
  type PeAddress,
} from '../errors.js';
export { withTorch, type TorchOptions } from '../bench/with-torch.js';
export type { SessionRun } from '../bench/contract.js';
export type { SessionReport } from '../session/session.js';
// Tensor parallelism (lib/tp): Megatron's layers, the layer's time breakdown, the model presets.
export { parallelState, ColumnParallelLinear, RowParallelLinear, TransformerLayer, LayerTimeline, breakdown, MODEL_PRESETS, type TransformerLayerOptions, type Breakdown } from '../tp/index.js';

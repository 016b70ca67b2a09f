// Runs on: a host thread (main, or the executor running a spawned rank).
// Owns: Megatron's parallel_state for tensor parallelism — which TP group a
// rank belongs to, its rank in it and the group's size — for one rank.
//
// Why every function takes `torch`: ranks here are not processes. Under
// `--threads 1` every rank's host code shares one thread (and under `rank` a
// thread may host several ranks), so Megatron's module-level globals
// (_TENSOR_MODEL_PARALLEL_GROUP) would be shared by all ranks of the thread.
// The state is kept per process group instead — a WeakMap keyed by the rank's
// `torch.distributed` — and each call names the rank by passing its torch:
//
//   parallelState.initializeModelParallel(torch, { tensorModelParallelSize: ws });
//   parallelState.getTensorModelParallelRank(torch);   // 0 .. ws-1
//
// Keying by the process group (not the Torch) means a new group starts
// uninitialised: after a failed spawn the session re-binds torch.distributed.
//
// Scope: one tensor-parallel group spanning the whole world (TP size = world
// size). Pipeline and data parallel groups (TP < world size) are not
// supported; initializeModelParallel refuses any other size.
import { KernbenchError } from '../errors.js';
import type { Distributed } from '../host/distributed.js';
import type { Torch } from '../host/torch.js';

export interface ModelParallelOptions {
  /** Ranks a layer's weights are split over. Required; must equal the world size. */
  tensorModelParallelSize: number;
}

interface TensorParallelGroup {
  /** This rank's index in the group (= its distributed rank: the group is the world). */
  rank: number;
  size: number;
}

const groups = new WeakMap<Distributed, TensorParallelGroup>();

/**
 * Form the tensor-parallel group of this rank. Needs the default process
 * group (torch.distributed.initProcessGroup, else ERR_NOT_INITIALIZED) and TP
 * size = world size (else ERR_WORLD_SIZE_MISMATCH); a second call on this rank
 * is ERR_ALREADY_INITIALIZED.
 */
export function initializeModelParallel(torch: Torch, options: ModelParallelOptions): void {
  const keys = Object.keys(options ?? {});
  const unknown = keys.filter((k) => k !== 'tensorModelParallelSize');
  if (unknown.length > 0) throw new KernbenchError('ERR_UNKNOWN_OPTION', `initializeModelParallel takes { tensorModelParallelSize }, got unknown option(s) ${unknown.join(', ')}`);
  const size = options.tensorModelParallelSize;
  if (!Number.isInteger(size) || size < 1) throw new KernbenchError('ERR_OUT_OF_RANGE', `initializeModelParallel: tensorModelParallelSize must be a positive integer, got ${JSON.stringify(size)}`);
  const dist = torch.distributed;
  if (!dist.isInitialized()) {
    throw new KernbenchError('ERR_NOT_INITIALIZED', `initializeModelParallel needs the default process group; call torch.distributed.initProcessGroup({backend: "ahbm"}) first, got rank ${dist.getRank()} with no process group`);
  }
  const existing = groups.get(dist);
  if (existing) throw new KernbenchError('ERR_ALREADY_INITIALIZED', `initializeModelParallel: rank ${existing.rank} is already initialised (tensor model parallel size ${existing.size}); call destroyModelParallel(torch) first, got a second call`);
  const worldSize = dist.getWorldSize();
  if (size !== worldSize) {
    throw new KernbenchError('ERR_WORLD_SIZE_MISMATCH', `initializeModelParallel: only tensor parallelism over the whole world is supported, so tensorModelParallelSize must equal the world size (${worldSize}), got ${size}`);
  }
  groups.set(dist, { rank: dist.getRank(), size });
}

/** Whether initializeModelParallel has run for this rank (and destroyModelParallel has not). */
export function modelParallelIsInitialized(torch: Torch): boolean {
  return groups.has(torch.distributed);
}

/** This rank's index in its tensor-parallel group. */
export function getTensorModelParallelRank(torch: Torch): number {
  return requireGroup(torch, 'getTensorModelParallelRank').rank;
}

/** Number of ranks in this rank's tensor-parallel group. */
export function getTensorModelParallelWorldSize(torch: Torch): number {
  return requireGroup(torch, 'getTensorModelParallelWorldSize').size;
}

/** Forget this rank's tensor-parallel group (Megatron's destroy_model_parallel). A no-op when not initialised. */
export function destroyModelParallel(torch: Torch): void {
  groups.delete(torch.distributed);
}

function requireGroup(torch: Torch, caller: string): TensorParallelGroup {
  const g = groups.get(torch.distributed);
  if (!g) throw new KernbenchError('ERR_NOT_INITIALIZED', `${caller}: model parallel is not initialised on rank ${torch.distributed.getRank()}; call initializeModelParallel(torch, { tensorModelParallelSize }) first, got no tensor-parallel group`);
  return g;
}

// Runs on: host threads. Owns: which collective algorithm modules exist (the
// `module:` names a ccl.yaml entry may use) and loading one.
import { KernbenchError } from '../errors.js';
import { isKernel, type Kernel } from '../kernel/define.js';
import type { TensorDesc } from '../runtime/tensor-desc.js';
import type { ReduceOp } from './reduce-op.js';

/** Module name (as written in ccl.yaml) -> file under lib/ccl/algorithms. */
export const ALGORITHM_MODULES = {
  ring_allreduce: './algorithms/ring_allreduce.js',
} as const;

export type AlgorithmModule = keyof typeof ALGORITHM_MODULES;

export interface AllReduceAlgorithm {
  allReduce: Kernel<[TensorDesc, ReduceOp]>;
}

export async function loadAlgorithm(module: string): Promise<AllReduceAlgorithm> {
  if (!(module in ALGORITHM_MODULES)) {
    throw new KernbenchError('ERR_CONFIG', `unknown CCL algorithm module; known: ${Object.keys(ALGORITHM_MODULES).join(', ')}, got '${module}'`);
  }
  const mod = (await import(ALGORITHM_MODULES[module as AlgorithmModule])) as Record<string, unknown>;
  if (!isKernel(mod.allReduce)) throw new KernbenchError('ERR_INTERNAL', `CCL module '${module}' exports no allReduce kernel`);
  return { allReduce: mod.allReduce as Kernel<[TensorDesc, ReduceOp]> };
}

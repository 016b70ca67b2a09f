// Runs on: any thread. Owns: the reduction ops of collectives (PyTorch's ReduceOp).
import { KernbenchError } from '../errors.js';

export const REDUCE_OPS = ['sum', 'prod', 'min', 'max', 'avg'] as const;
export type ReduceOp = (typeof REDUCE_OPS)[number];

export function checkReduceOp(op: unknown): ReduceOp {
  if (!REDUCE_OPS.includes(op as ReduceOp)) throw new KernbenchError('ERR_INVALID_ARG_VALUE', `op must be one of ${REDUCE_OPS.join('|')}, got ${JSON.stringify(op)}`);
  return op as ReduceOp;
}

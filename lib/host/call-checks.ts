// Runs on: a host thread. Owns: the checks of the tensors a collective or a
// point-to-point call is given (./distributed.ts): shards, PE, dtype, sizes and
// split sizes, and the root's list of a gather or scatter.
import type { ProcessGroup } from '../ccl/process-group.js';
import { KernbenchError } from '../errors.js';
import { DIRECTIONS, type Direction } from '../shm/layout.js';
import type { Tensor } from './tensor.js';

/** allGather / reduceScatter: one shard each, same PE, same dtype, and sizes that fit. */
export function checkPair(name: string, out: Tensor, t: Tensor, sizesFit: boolean, sizeRule: string): void {
  const o = out.toDesc(), i = t.toDesc();
  if (o.shards.length !== 1 || i.shards.length !== 1) {
    throw placementError(name, `out and input must each be one shard (the default DPPolicy), got ${o.shards.length} and ${i.shards.length} shards`);
  }
  const [a, b] = [o.shards[0], i.shards[0]];
  if (a.cube !== b.cube || a.pe !== b.pe) throw placementError(name, `out and input must be on the same PE, got (cube ${a.cube}, pe ${a.pe}) and (cube ${b.cube}, pe ${b.pe})`);
  if (out.dtype !== t.dtype) throw new KernbenchError('ERR_DTYPE_MISMATCH', `${name}: out and input must have the same dtype, got ${out.dtype} and ${t.dtype}`);
  if (!sizesFit) throw new KernbenchError('ERR_SHAPE_MISMATCH', `${name}: ${sizeRule}, got out of ${out.numel} and input of ${t.numel} elements`);
}

/** The root's list of a gather or scatter as tensor descriptions (called on the root only), each checked against `t`. */
export function rootList(name: string, field: string, t: Tensor, list: readonly Tensor[] | Tensor | undefined, group: ProcessGroup): unknown[] {
  const p = group.size;
  const tensors = list === undefined ? [] : Array.isArray(list) ? (list as readonly Tensor[]) : [list as Tensor];
  const whole = tensors.length === 1 && p > 1;
  if (tensors.length !== p && !whole) {
    throw new KernbenchError('ERR_ROOT_LIST', `${name}: the root's ${field} must be ${p} tensors of ${t.numel} elements or one tensor of ${p} x ${t.numel}, got ${list === undefined ? 'none' : `${tensors.length} tensors`}`);
  }
  for (const x of tensors) checkPair(name, x, t, x.numel === (whole ? p : 1) * t.numel, `each tensor of ${field} must have ${whole ? `${p} x ` : ''}${t.numel} elements`);
  return tensors.map((x) => x.toDesc());
}

/** allToAllSingle for an algorithm that takes p equal blocks only: ERR_UNEVEN_SPLIT saying `why` unless every split is t.numel / p. */
export function checkEvenSplits(group: ProcessGroup, out: Tensor, t: Tensor, inSplits: readonly number[], outSplits: readonly number[], why: string): void {
  const p = group.size;
  if (out.numel === t.numel && t.numel % p === 0 && [...inSplits, ...outSplits].every((x) => x === t.numel / p)) return;
  throw new KernbenchError('ERR_UNEVEN_SPLIT', `allToAllSingle on ${group}: ${why}, got inputSplitSizes [${inSplits.join(', ')}] and outputSplitSizes [${outSplits.join(', ')}]`);
}

/** Tensors of one kernel: one shard each, all at one (cube, pe). */
export function checkOnePe(name: string, ts: readonly Tensor[]): void {
  const descs = ts.map((x) => x.toDesc());
  const [a] = descs[0].shards;
  const problem = (d: (typeof descs)[number]): string | undefined => {
    if (d.shards.length !== 1) return `every tensor must be one shard (the default DPPolicy), got ${d.shards.length} shards for '${d.name}'`;
    const [b] = d.shards;
    return a.cube !== b.cube || a.pe !== b.pe ? `every tensor must be on the same PE, got (cube ${a.cube}, pe ${a.pe}) and (cube ${b.cube}, pe ${b.pe})` : undefined;
  };
  const found = descs.map(problem).find((x) => x !== undefined);
  if (found !== undefined) throw placementError(name, `${found}`);
}

/** A launch's declared `sends` (directions its kernels send on) as DIRECTIONS indices; undefined: every direction. */
export function checkSends(name: string, sends: readonly Direction[] | undefined): number[] | undefined {
  if (sends === undefined) return undefined;
  if (!Array.isArray(sends) || sends.length === 0) throw new KernbenchError('ERR_INVALID_ARG_TYPE', `${name}: sends must be a non-empty array of directions (${DIRECTIONS.join(', ')}), got ${Array.isArray(sends) ? 'an empty array' : typeof sends}`);
  const bad = sends.find((d) => !DIRECTIONS.includes(d));
  if (bad !== undefined) throw new KernbenchError('ERR_UNKNOWN_DIRECTION', `${name}: sends takes directions (${DIRECTIONS.join(', ')}), got '${String(bad)}'`);
  return DIRECTIONS.flatMap((d, i) => (sends.includes(d) ? [i] : []));
}

/** A tensor of a collective or point-to-point call is not where the call needs it. */
export function placementError(name: string, problem: string): KernbenchError {
  return new KernbenchError('ERR_TENSOR_PLACEMENT', `${name}: ${problem}`);
}

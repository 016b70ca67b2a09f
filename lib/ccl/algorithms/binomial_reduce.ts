// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the binomial-tree reduce (torch.distributed.reduce): the reduction of
// every rank's tile lands on the root `dst` (a group rank); the other ranks'
// tensors are left as they were. Each partner is addressed by rank (tl.peer).
// Steps and cost law: docs/algorithms/partners.md, "binomial_reduce".
//   v = (r - dst) mod p, the rank relative to the root. For m = 1, 2, 4, ...:
//   if v has bit m, send the partial to v - m and stop; else, if v + m < p,
//   receive v + m's partial and reduce it in (all receives are issued first,
//   and reduced in order of m). The root (v = 0) scales for avg and stores.
//   T = ceil(log2 p) (a + N b) for N bytes per rank on a fully connected fabric.
import { defineKernel } from '../../kernel/define.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import { defineAlgorithm } from '../define-algorithm.js';
import { lowBit } from '../partners.js';
import type { ReduceOp } from '../reduce-op.js';
import { mod, reductionOf } from '../steps.js';

export const meta = defineAlgorithm({
  provides: 'reduce',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  peers: true,
  summary: 'binomial tree: ceil(log2 p) rounds, rank v sends to v - lowbit(v) (docs/algorithms/partners.md)',
});

export const reduce = defineKernel(import.meta.url, 'reduce', async (tl, t: TensorDesc, op: ReduceOp, dst: number, _params: Record<string, unknown>) => {
  const p = tl.worldSize;
  const v = mod(tl.rank - dst, p);
  const abs = (rel: number) => tl.peer(mod(rel + dst, p));
  const data = await tl.load(t);
  const n = data.size;
  // The children: v + m for every m below v's lowest bit (every m for the root).
  const top = v === 0 ? p : lowBit(v);
  const children = [];
  for (let m = 1; m < top && v + m < p; m *= 2) children.push(tl.recvAsync(abs(v + m), n, data.dtype));
  for (const f of children) tl.reduce(reductionOf(op), data, await tl.wait(f), data);
  if (v > 0) {
    await tl.send(abs(v - lowBit(v)), data);
    return;
  }
  if (op === 'avg') data.data.set(tl.scale(data, 1 / p).data);
  await tl.store(t, data);
});

// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the recursive-doubling all-reduce, each partner addressed by rank
// (tl.peer). Steps and cost law: docs/algorithms/partners.md, "recursive_doubling_allreduce".
//   p a power of two, rank r, k = 0 .. log2 p - 1: exchange the whole tile
//   with rank r xor 2^k and reduce what arrives into it. Every rank ends with
//   the reduction of all p tiles (a op b = b op a, so the partners agree bit for bit).
//   T = log2(p) (a + N b) for N bytes per rank on a fully connected fabric.
//   Other p: the extra ranks fold in first and get the result back after
//   (lib/ccl/partners.ts Fold): T = (floor(log2 p) + 2) (a + N b).
import { defineKernel } from '../../kernel/define.js';
import { defineAlgorithm } from '../define-algorithm.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import type { ReduceOp } from '../reduce-op.js';
import { Fold } from '../partners.js';
import { reductionOf } from '../steps.js';
import type { WorldShape } from '../world.js';

export const meta = defineAlgorithm({
  provides: 'all_reduce',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  peers: true,
  summary: 'recursive doubling: log2 p exchanges of the whole tensor with rank r xor 2^k (docs/algorithms/partners.md)',
});

export const allReduce = defineKernel(import.meta.url, 'allReduce', async (tl, t: TensorDesc, op: ReduceOp, _shape: WorldShape, _params: Record<string, unknown>) => {
  const p = tl.worldSize;
  const red = reductionOf(op);
  const data = await tl.load(t, { inPlace: true });
  const fold = new Fold(p, tl.rank);
  await fold.gather(tl, data, red);
  if (!fold.extra) {
    const got = tl.zeros(data.size, data.dtype);
    for (let d = 1; d < fold.q; d *= 2) {
      const partner = tl.peer(tl.rank ^ d);
      const sent = tl.send(partner, data);
      await tl.recv(partner, data.size, data.dtype, got);
      // The tile is what was sent: reduce into it only once the send has read it.
      await sent;
      tl.reduce(red, data, got, data);
    }
    if (op === 'avg') data.data.set(tl.scale(data, 1 / p).data);
  }
  await fold.spread(tl, data);
  await tl.store(t, data);
});

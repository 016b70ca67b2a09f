// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: Bruck's all-to-all (even splits), each partner addressed by rank
// (tl.peer). Steps and cost law: docs/algorithms/partners.md, "bruck_alltoall".
//   1. rotate: position j holds this rank's block for rank r + j.
//   2. k = 0 .. ceil(log2 p) - 1: send the blocks at every position j with
//      bit k set to rank r + 2^k, in one message; receive the same positions
//      from rank r - 2^k in their place. A block at position j has then moved
//      j ranks forward: it is on its destination.
//   3. un-rotate: position j holds rank r - j's block for r.
//   T = log2(p) (a + (N/2) b) for N input bytes per rank (p a power of two),
//   on a fully connected fabric; ceil(log2 p) steps in general.
import { defineKernel } from '../../kernel/define.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import { defineAlgorithm } from '../define-algorithm.js';
import { mod } from '../steps.js';

export const meta = defineAlgorithm({
  provides: 'all_to_all',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  peers: true,
  splits: 'even',
  summary: 'Bruck: ceil(log2 p) steps, step k sends the blocks whose offset has bit k to rank r + 2^k (docs/algorithms/partners.md)',
});

export const allToAll = defineKernel(
  import.meta.url,
  'allToAll',
  async (tl, out: TensorDesc, input: TensorDesc, _inSplits: readonly number[], _outSplits: readonly number[], _params: Record<string, unknown>) => {
    const p = tl.worldSize;
    const r = tl.rank;
    const data = await tl.load(input);
    const n = data.size / p;
    const block = (j: number) => data.slice(mod(r + j, p) * n, n);
    const held = tl.zeros(data.size, data.dtype);
    for (let j = 0; j < p; j++) held.data.set(block(j).data, j * n);
    for (let bit = 1; bit < p && n > 0; bit *= 2) {
      const at: number[] = [];
      for (let j = 1; j < p; j++) if (j & bit) at.push(j);
      const bundle = tl.zeros(at.length * n, data.dtype);
      at.forEach((j, i) => bundle.data.set(held.data.subarray(j * n, (j + 1) * n), i * n));
      const sent = tl.send(tl.peer(mod(r + bit, p)), bundle);
      const got = await tl.recv(tl.peer(mod(r - bit, p)), at.length * n, data.dtype);
      await sent;
      at.forEach((j, i) => held.data.set(got.data.subarray(i * n, (i + 1) * n), j * n));
    }
    const result = tl.zeros(data.size, out.dtype);
    for (let j = 0; j < p; j++) result.data.set(held.data.subarray(j * n, (j + 1) * n), mod(r - j, p) * n);
    await tl.store(out, result);
  },
);

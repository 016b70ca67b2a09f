// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the pairwise-exchange all-to-all (torch.distributed.allToAllSingle with
// even splits, in runs with peer channels: ccl.peer_ranks >= the group's size).
// Each rank addresses its partners by rank (tl.peer, docs/decisions/0060-peer-channels.md).
// Steps and cost: docs/algorithms/all_to_all.md.
//   step s = 1..p-1: send block (r + s) to rank r + s, receive block r of rank
//   r - s into output block (r - s).
//   T = (p - 1)(alpha + N / (p beta)) for N input bytes per rank on a fully
//   connected fabric (every pair on its own link).
import { defineKernel } from '../../kernel/define.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import { mod } from '../steps.js';

export const allToAllPairwise = defineKernel(import.meta.url, 'allToAllPairwise', async (tl, out: TensorDesc, input: TensorDesc) => {
  const p = tl.worldSize;
  const r = tl.rank;
  const data = await tl.load(input);
  const n = data.size / p;
  const result = tl.zeros(data.size, out.dtype);
  result.data.set(data.data.subarray(r * n, (r + 1) * n), r * n);
  for (let s = 1; s < p; s++) {
    const dst = mod(r + s, p);
    const src = mod(r - s, p);
    const sent = tl.send(tl.peer(dst), data.slice(dst * n, n));
    await tl.recv(tl.peer(src), n, input.dtype, result.slice(src * n, n));
    await sent;
  }
  await tl.store(out, result);
});

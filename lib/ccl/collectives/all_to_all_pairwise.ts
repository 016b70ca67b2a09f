// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the pairwise-exchange all-to-all (torch.distributed.allToAllSingle, in
// runs with peer channels: ccl.peer_ranks >= the group's size), with uneven
// splits. Each rank addresses its partners by rank (tl.peer,
// docs/decisions/0060-peer-channels.md). Steps and cost: docs/algorithms/all_to_all.md.
//   rank r's input holds inSplits[d] elements for each group rank d, in rank
//   order; its output outSplits[s] elements from each rank s, in rank order.
//   step s = 1..p-1: send the block for rank r + s to it, receive rank r - s's
//   block for r into its place (a block of 0 elements is neither sent nor received).
//   T = (p - 1)(alpha + N / (p beta)) for N input bytes per rank and even splits,
//   on a fully connected fabric (every pair on its own link).
import { defineKernel } from '../../kernel/define.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import { mod } from '../steps.js';

/** Offsets of blocks of the given sizes laid end to end. */
function offsets(sizes: readonly number[]): number[] {
  const at = [0];
  for (const n of sizes) at.push(at[at.length - 1] + n);
  return at;
}

export const allToAllPairwise = defineKernel(
  import.meta.url,
  'allToAllPairwise',
  async (tl, out: TensorDesc, input: TensorDesc, inSplits: readonly number[], outSplits: readonly number[]) => {
    const p = tl.worldSize;
    const r = tl.rank;
    const data = await tl.load(input);
    const inAt = offsets(inSplits);
    const outAt = offsets(outSplits);
    const result = tl.zeros(outAt[p], out.dtype);
    result.data.set(data.data.subarray(inAt[r], inAt[r] + inSplits[r]), outAt[r]);
    for (let s = 1; s < p; s++) {
      const dst = mod(r + s, p);
      const src = mod(r - s, p);
      const sent = inSplits[dst] > 0 ? tl.send(tl.peer(dst), data.slice(inAt[dst], inSplits[dst])) : null;
      if (outSplits[src] > 0) await tl.recv(tl.peer(src), outSplits[src], input.dtype, result.slice(outAt[src], outSplits[src]));
      if (sent !== null) await sent;
    }
    await tl.store(out, result);
  },
);

// Runs on: executor threads (the kernels); imported by hosts for their references.
// Owns: the pairwise-exchange all-to-all (torch.distributed.allToAllSingle and
// allToAll, in runs with peer channels: ccl.peer_ranks >= the group's size),
// with uneven splits. Each rank addresses its partners by rank (tl.peer,
// docs/decisions/0060-peer-channels.md). Steps and cost: docs/algorithms/all_to_all.md.
//   rank r sends a block to each group rank d and receives one from each rank s;
//   step s = 1..p-1: send the block for rank r + s to it, receive rank r - s's
//   block for r into its place (a block of 0 elements is neither sent nor received).
//   T = (p - 1)(alpha + N / (p beta)) for N input bytes per rank and even splits,
//   on a fully connected fabric (every pair on its own link).
// Two faces, one exchange: allToAllPairwise over one input and one output tensor
// cut by split sizes (all_to_all_single), allToAllPairwiseList over a tensor per
// rank on each side (all_to_all).
import { defineKernel } from '../../kernel/define.js';
import type { KernelContext } from '../../kernel/context.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import type { Tile } from '../../tile/tile.js';
import { mod } from '../steps.js';

/** Offsets of blocks of the given sizes laid end to end. */
function offsets(sizes: readonly number[]): number[] {
  const at = [0];
  for (const n of sizes) at.push(at[at.length - 1] + n);
  return at;
}

/**
 * The exchange itself. `block(d)` is the tile for group rank d (this rank's own
 * block included), `into(s)` where rank s's block lands; a null is an empty block.
 */
async function pairwise(tl: KernelContext, block: (d: number) => Tile | null, into: (s: number) => Tile | null): Promise<void> {
  const p = tl.worldSize;
  const r = tl.rank;
  const own = block(r);
  if (own !== null) into(r)?.data.set(own.data);
  for (let s = 1; s < p; s++) {
    const dst = mod(r + s, p);
    const src = mod(r - s, p);
    const out = block(dst);
    const sent = out !== null ? tl.send(tl.peer(dst), out) : null;
    const dest = into(src);
    if (dest !== null) await tl.recv(tl.peer(src), dest.size, dest.dtype, dest);
    if (sent !== null) await sent;
  }
}

export const allToAllPairwise = defineKernel(
  import.meta.url,
  'allToAllPairwise',
  async (tl, out: TensorDesc, input: TensorDesc, inSplits: readonly number[], outSplits: readonly number[]) => {
    const p = tl.worldSize;
    const data = await tl.load(input);
    const inAt = offsets(inSplits);
    const outAt = offsets(outSplits);
    const result = tl.zeros(outAt[p], out.dtype);
    await pairwise(
      tl,
      (d) => (inSplits[d] > 0 ? data.slice(inAt[d], inSplits[d]) : null),
      (s) => (outSplits[s] > 0 ? result.slice(outAt[s], outSplits[s]) : null),
    );
    await tl.store(out, result);
  },
);

/** outs[s] receives rank s's block for this rank, ins[d] is this rank's block for rank d (one shard each, on this PE). */
export const allToAllPairwiseList = defineKernel(import.meta.url, 'allToAllPairwiseList', async (tl, outs: readonly TensorDesc[], ins: readonly TensorDesc[]) => {
  const numel = (t: TensorDesc): number => t.shape.reduce((a, b) => a * b, 1);
  const blocks: (Tile | null)[] = [];
  for (const t of ins) blocks.push(numel(t) > 0 ? await tl.load(t) : null);
  const results = outs.map((t) => (numel(t) > 0 ? tl.zeros(numel(t), t.dtype) : null));
  await pairwise(tl, (d) => blocks[d], (s) => results[s]);
  for (let s = 0; s < outs.length; s++) {
    const got = results[s];
    if (got !== null) await tl.store(outs[s], got);
  }
});

// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: ring reduce-scatter from one tensor (torch.distributed.reduceScatter,
// PyTorch's reduce_scatter_tensor): every rank's p n-element input is cut into
// p blocks; rank r's n-element output gets block r reduced over all ranks.
// Steps and cost: docs/algorithms/reduce_scatter.md.
//   step s = 0..p-2: send block (r - s - 1) east, receive block (r - s - 2) from
//   the west and reduce it into the local copy; rank r ends owning block r.
//   T = (p - 1)(alpha + N/(p beta)) for N input bytes per rank.
import { defineKernel } from '../../kernel/define.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import type { ReduceOp } from '../reduce-op.js';
import { Chunks, reductionOf, ringReduceScatter, scaleChunk } from '../steps.js';
import type { Direction } from '../../shm/layout.js';

/** Where `reduceScatter` sends, declared at its launch (decision 0188). */
export const REDUCE_SCATTER_SENDS: readonly Direction[] = ['east'];

export const reduceScatter = defineKernel(import.meta.url, 'reduceScatter', async (tl, out: TensorDesc, input: TensorDesc, op: ReduceOp) => {
  const p = tl.worldSize;
  const data = await tl.load(input);
  const seg = new Chunks(0, data.size, p);
  const own = await ringReduceScatter(tl, data, seg, { p, pos: tl.rank, send: 'east', recv: 'west' }, reductionOf(op), -1);
  if (op === 'avg') scaleChunk(tl, data, seg, own, 1 / p);
  await tl.store(out, seg.of(data, own));
});

// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: ring all-gather into one tensor (torch.distributed.allGather, PyTorch's
// all_gather_into_tensor): rank r's n-element input lands at [r n, (r + 1) n)
// of every rank's p n-element output. Steps and cost: docs/algorithms/all_gather.md.
//   step s = 0..p-2: send block (r - s) east, receive block (r - s - 1) from the west.
//   T = (p - 1)(alpha + N/beta) for N input bytes per rank.
import { defineKernel } from '../../kernel/define.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import { Chunks, ringAllGather } from '../steps.js';
import type { Direction } from '../../shm/layout.js';

/** Where `allGather` sends, declared at its launch (decision 0188). */
export const ALL_GATHER_SENDS: readonly Direction[] = ['east'];

export const allGather = defineKernel(import.meta.url, 'allGather', async (tl, out: TensorDesc, input: TensorDesc) => {
  const p = tl.worldSize;
  const mine = await tl.load(input);
  const data = tl.zeros(mine.size * p, out.dtype);
  data.data.set(mine.data, tl.rank * mine.size);
  // Block r is this rank's own: it "owns" chunk pos + 1 + shift with shift = -1.
  await ringAllGather(tl, data, new Chunks(0, data.size, p), { p, pos: tl.rank, send: 'east', recv: 'west' }, -1);
  await tl.store(out, data);
});

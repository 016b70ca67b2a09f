// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the ring all-to-all into one tensor (torch.distributed.allToAllSingle
// with even splits): every rank's p n-element input is cut into p blocks;
// block d goes to group rank d, and rank r's output block s is rank s's block r.
// Steps and cost: docs/algorithms/all_to_all.md.
//   step s = 1..p-1: send east a bundle of p - s blocks, receive from the west
//   the bundle rank r - s started; its first block is rank r - s's block r
//   (kept), the rest is the next step's bundle (store and forward).
//   T = (p - 1) alpha + p (p - 1) / 2 * N / (p beta) for N input bytes per rank.
import { defineKernel } from '../../kernel/define.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import { mod } from '../steps.js';
import type { Direction } from '../../shm/layout.js';

/** Where `allToAll` sends, declared at its launch (decision 0188). */
export const ALL_TO_ALL_SENDS: readonly Direction[] = ['east'];

export const allToAll = defineKernel(import.meta.url, 'allToAll', async (tl, out: TensorDesc, input: TensorDesc) => {
  const p = tl.worldSize;
  const r = tl.rank;
  const data = await tl.load(input);
  const n = data.size / p;
  const result = tl.zeros(data.size, out.dtype);
  result.data.set(data.data.subarray(r * n, (r + 1) * n), r * n);
  if (p > 1) {
    // The first bundle: this rank's blocks for r + 1, ..., r + p - 1, nearest first.
    let bundle = tl.zeros((p - 1) * n, input.dtype);
    for (let j = 1; j < p; j++) bundle.data.set(data.data.subarray(mod(r + j, p) * n, (mod(r + j, p) + 1) * n), (j - 1) * n);
    for (let s = 1; s < p; s++) {
      const sent = tl.send('east', bundle);
      const got = await tl.recv('west', (p - s) * n, input.dtype);
      const src = mod(r - s, p);
      result.data.set(got.data.subarray(0, n), src * n);
      await sent;
      bundle = got.slice(n, (p - s - 1) * n);
    }
  }
  await tl.store(out, result);
});

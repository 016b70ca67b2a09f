// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the ring all-reduce kernel — reduce-scatter then all-gather over IPCQ.
// Steps and alpha-beta cost: docs/algorithms/ring_allreduce.md.
//
// p CCL ranks in a ring, each holding n elements cut into p chunks (chunk i is
// [floor(i n / p), floor((i+1) n / p)), so n need not divide by p).
//   reduce-scatter, step s = 0..p-2: send chunk (r - s) east, receive chunk
//     (r - s - 1) from the west and reduce it into the local copy. Rank r ends
//     owning the fully reduced chunk (r + 1) mod p.
//   all-gather, step s = 0..p-2: send chunk (r + 1 - s) east, receive chunk
//     (r - s) from the west and keep it.
// Cost on a uniform ring: 2(p - 1)(alpha + N/(p beta)) for N bytes per rank.
import { defineKernel } from '../../kernel/define.js';
import { defineAlgorithm } from '../define-algorithm.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import type { ReduceOp } from '../reduce-op.js';
import { Chunks, ringAllReduce } from '../steps.js';
import type { WorldShape } from '../world.js';

export const meta = defineAlgorithm({
  provides: 'all_reduce',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  summary: 'ring reduce-scatter + all-gather (docs/algorithms/ring_allreduce.md)',
  // East only: on a ring of two, east and west are one link, and it is this kernel's alone (decision 0188).
  sends: ['east'],
});

export const allReduce = defineKernel(import.meta.url, 'allReduce', async (tl, t: TensorDesc, op: ReduceOp, _shape: WorldShape, _params: Record<string, unknown>) => {
  const p = tl.worldSize;
  // In place: the ring reduces into its shard's own bytes and stores them back once (no copy to hold).
  const data = await tl.load(t, { inPlace: true });
  await ringAllReduce(tl, data, new Chunks(0, data.size, p), { p, pos: tl.rank, send: 'east', recv: 'west' }, op, p);
  await tl.store(t, data);
});

// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: ring broadcast (torch.distributed.broadcast): the source's shard flows
// east around the ring, pipelined in p pieces. Rank r sits at distance
// d = (r - src) mod p from the source; every rank but the source receives each
// piece from the west and keeps it, every rank but the last (d = p - 1) passes
// it on to the east. Steps and cost: docs/algorithms/broadcast.md.
//   T = (p - 1) alpha + (2p - 2) N/(p beta)   (p pieces over p - 1 hops)
import { defineKernel } from '../../kernel/define.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import { Chunks, mod } from '../steps.js';
import type { Direction } from '../../shm/layout.js';

/** Where `broadcast` sends, declared at its launch (decision 0188). */
export const BROADCAST_SENDS: readonly Direction[] = ['east'];

export const broadcast = defineKernel(import.meta.url, 'broadcast', async (tl, t: TensorDesc, src: number) => {
  const p = tl.worldSize;
  const d = mod(tl.rank - src, p);
  if (p === 1) return;
  const data = d === 0 ? await tl.load(t) : tl.zeros(tl.shardSize(t), t.dtype);
  const seg = new Chunks(0, data.size, p);
  const sends = [];
  for (let i = 0; i < p; i++) {
    if (d > 0) data.data.set((await tl.recv('west', seg.count(i), t.dtype)).data, seg.lo(i));
    if (d < p - 1) sends.push(tl.send('east', seg.of(data, i)));
  }
  for (const s of sends) await s;
  if (d > 0) await tl.store(t, data);
});

// Runs on: executor threads (the kernel); imported by hosts and tests.
// Owns: the point-to-point smoke test (seed: hello_send): in a ring world,
// rank 0 sends a known tile to rank 1 (its east neighbour), which checks every
// element and stores the tile into its shard. Other ranks do nothing.
// Cost: one transfer, alpha * hops + S/beta (plus DMA setup and the staging read).
import { KernbenchError } from '../../errors.js';
import { defineKernel } from '../../kernel/define.js';
import { defineAlgorithm } from '../define-algorithm.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';

/** Element i of the tile rank 0 sends: small integers, exact in every dtype. */
export function helloValue(i: number): number {
  return (i % 64) + 1;
}

export const meta = defineAlgorithm({
  provides: 'point_to_point',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  summary: 'point-to-point smoke test: rank 0 sends a tile to rank 1 (docs/algorithms/hello_send.md)',
});

export const helloSend = defineKernel(import.meta.url, 'helloSend', async (tl, t: TensorDesc) => {
  const n = tl.shardSize(t);
  if (tl.worldSize < 2) throw tl.error('ERR_WRONG_WORLD', `hello_send needs at least 2 ranks, got a world of ${tl.worldSize}`);
  if (tl.rank === 0) {
    const tile = tl.zeros(n, t.dtype);
    for (let i = 0; i < n; i++) tile.data[i] = helloValue(i);
    await tl.send('east', tile);
  } else if (tl.rank === 1) {
    const got = await tl.recv('west', n, t.dtype);
    const bad = got.data.findIndex((v, i) => v !== helloValue(i));
    if (bad >= 0) {
      throw new KernbenchError('ERR_INTERNAL', `hello_send: rank 1 on PE ${tl.peId} received a wrong tile at element ${bad} of ${n}: expected ${helloValue(bad)}, got ${got.data[bad]}`, {
        pe: tl.coord,
        kernel: tl.name,
        atPs: tl.nowPs,
      });
    }
    await tl.store(t, got);
  }
});

// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the binomial-tree gather (torch.distributed.gather): every rank's
// n-element tile lands on the root `dst` (a group rank), rank s's as block s.
// Each partner is addressed by rank (tl.peer).
// Steps and cost law: docs/algorithms/partners.md, "binomial_gather".
//   v = (r - dst) mod p. Rank v collects the blocks of ranks v .. v + lowbit(v) - 1
//   (the root: all): for m = 1, 2, 4, ... below lowbit(v), it receives the
//   blocks of v + m .. v + 2m - 1 from v + m (all receives issued first), then
//   sends what it holds to v - lowbit(v). The root stores block s of rank s.
//   T = log2(p) a + (p - 1) n b for n bytes per rank (p a power of two) on a
//   fully connected fabric.
import { defineKernel } from '../../kernel/define.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import { defineAlgorithm } from '../define-algorithm.js';
import { lowBit } from '../partners.js';
import { mod } from '../steps.js';

export const meta = defineAlgorithm({
  provides: 'gather',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  peers: true,
  summary: 'binomial tree: rank v gathers its subtree, then sends it to v - lowbit(v) (docs/algorithms/partners.md)',
});

export const gather = defineKernel(import.meta.url, 'gather', async (tl, outs: readonly TensorDesc[], input: TensorDesc, dst: number, _params: Record<string, unknown>) => {
  const p = tl.worldSize;
  const v = mod(tl.rank - dst, p);
  const abs = (rel: number) => tl.peer(mod(rel + dst, p));
  const mine = await tl.load(input);
  const n = mine.size;
  const top = v === 0 ? p : lowBit(v);
  /** Blocks of ranks v .. v + held - 1, relative to the root. */
  const held = Math.min(top, p - v);
  const buf = tl.zeros(held * n, mine.dtype);
  buf.data.set(mine.data);
  const incoming = [];
  for (let m = 1; m < top && v + m < p; m *= 2) {
    const k = Math.min(m, p - v - m);
    if (n > 0) incoming.push(tl.recvAsync(abs(v + m), k * n, mine.dtype, buf.slice(m * n, k * n)));
  }
  for (const f of incoming) await tl.wait(f);
  if (v > 0) {
    if (n > 0) await tl.send(abs(v - lowBit(v)), buf);
    return;
  }
  // Relative block j is rank (j + dst) mod p's.
  const result = tl.zeros(p * n, mine.dtype);
  for (let j = 0; j < p; j++) result.data.set(buf.data.subarray(j * n, (j + 1) * n), mod(j + dst, p) * n);
  if (outs.length === 1) await tl.store(outs[0], result);
  else for (let s = 0; s < p; s++) await tl.store(outs[s], result.slice(s * n, n));
});

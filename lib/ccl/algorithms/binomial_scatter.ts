// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the binomial-tree scatter (torch.distributed.scatter): the root `src`
// (a group rank) holds p blocks of n elements; block s lands on rank s. Each
// partner is addressed by rank (tl.peer).
// Steps and cost law: docs/algorithms/partners.md, "binomial_scatter".
//   v = (r - src) mod p. Rank v > 0 receives the blocks of v .. v + lowbit(v) - 1
//   from v - lowbit(v); then, for m from the largest power of two below
//   lowbit(v) (the root: below p) down to 1, it sends the blocks of
//   v + m .. v + 2m - 1 to v + m (all sends issued at once, the largest first).
//   T = log2(p) a + (p - 1) n b for n bytes per rank (p a power of two) on a
//   fully connected fabric.
import { defineKernel } from '../../kernel/define.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import { defineAlgorithm } from '../define-algorithm.js';
import { lowBit, powerOfTwoBelow } from '../partners.js';
import { mod } from '../steps.js';

export const meta = defineAlgorithm({
  provides: 'scatter',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  peers: true,
  summary: 'binomial tree: rank v receives its subtree from v - lowbit(v), then halves it down (docs/algorithms/partners.md)',
});

export const scatter = defineKernel(import.meta.url, 'scatter', async (tl, out: TensorDesc, ins: readonly TensorDesc[], src: number, _params: Record<string, unknown>) => {
  const p = tl.worldSize;
  const v = mod(tl.rank - src, p);
  const abs = (rel: number) => tl.peer(mod(rel + src, p));
  const n = tl.shardSize(out);
  const top = v === 0 ? p : lowBit(v);
  const held = Math.min(top, p - v);
  /** Blocks of ranks v .. v + held - 1, relative to the root. */
  const buf = tl.zeros(held * n, out.dtype);
  if (v === 0) {
    // Rank s's block goes to relative position (s - src) mod p.
    const all = ins.length === 1 ? await tl.load(ins[0]) : null;
    for (let s = 0; s < p; s++) {
      const block = all !== null ? all.slice(s * n, n) : await tl.load(ins[s]);
      buf.data.set(block.data, mod(s - src, p) * n);
    }
  } else if (n > 0) {
    await tl.recv(abs(v - lowBit(v)), held * n, out.dtype, buf);
  }
  const sends = [];
  for (let m = powerOfTwoBelow(top - 1 || 1); m >= 1 && top > 1; m /= 2) {
    if (v + m >= p || n === 0) continue;
    const k = Math.min(m, p - v - m);
    sends.push(tl.send(abs(v + m), buf.slice(m * n, k * n)));
  }
  for (const s of sends) await s;
  await tl.store(out, buf.slice(0, n));
});

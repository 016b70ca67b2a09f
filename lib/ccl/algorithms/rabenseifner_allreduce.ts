// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: Rabenseifner's all-reduce — a reduce-scatter by recursive halving, then
// an all-gather by recursive doubling — each partner addressed by rank
// (tl.peer). Steps and cost law: docs/algorithms/partners.md, "rabenseifner_allreduce".
//   p a power of two, the tile cut into p chunks (lib/ccl/steps.ts Chunks).
//   reduce-scatter, d = p/2, p/4, ..., 1: rank r and r xor d split their
//     window of chunks in two halves; r keeps the lower half when r & d is 0,
//     else the upper, sends the other half and reduces the half it receives
//     into the one it keeps. Rank r ends owning chunk r, fully reduced.
//   all-gather, d = 1, 2, ..., p/2: send the window held, receive the
//     partner's (the adjacent window of d chunks) in place.
//   T = 2 log2(p) a + 2 (p - 1)/p N b for N bytes per rank on a fully connected fabric.
//   Other p: the extra ranks fold in first and get the result back after
//   (lib/ccl/partners.ts Fold): 2 (a + N b) more.
import { defineKernel } from '../../kernel/define.js';
import { defineAlgorithm } from '../define-algorithm.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import type { ReduceOp } from '../reduce-op.js';
import { Fold } from '../partners.js';
import { Chunks, reductionOf, scaleChunk } from '../steps.js';
import type { WorldShape } from '../world.js';

export const meta = defineAlgorithm({
  provides: 'all_reduce',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  peers: true,
  summary: 'Rabenseifner: recursive-halving reduce-scatter + recursive-doubling all-gather (docs/algorithms/partners.md)',
});

export const allReduce = defineKernel(import.meta.url, 'allReduce', async (tl, t: TensorDesc, op: ReduceOp, _shape: WorldShape, _params: Record<string, unknown>) => {
  const p = tl.worldSize;
  const red = reductionOf(op);
  const data = await tl.load(t, { inPlace: true });
  const fold = new Fold(p, tl.rank);
  await fold.gather(tl, data, red);
  if (!fold.extra) {
    const q = fold.q;
    const v = tl.rank;
    const seg = new Chunks(0, data.size, q);
    /** Elements [lo, hi) of the chunks [a, b). */
    const span = (a: number, b: number) => data.slice(seg.lo(a), seg.lo(b) - seg.lo(a));
    let lo = 0;
    let hi = q;
    for (let d = q / 2; d >= 1; d /= 2) {
      const partner = tl.peer(v ^ d);
      const mid = lo + d;
      const [keepLo, keepHi, giveLo, giveHi] = v & d ? [mid, hi, lo, mid] : [lo, mid, mid, hi];
      const give = span(giveLo, giveHi);
      const keep = span(keepLo, keepHi);
      // A window of empty chunks (fewer elements than ranks) is neither sent nor received, on both sides alike.
      const sent = give.size > 0 ? tl.send(partner, give) : null;
      if (keep.size > 0) tl.reduce(red, keep, await tl.recv(partner, keep.size, data.dtype), keep);
      if (sent !== null) await sent;
      [lo, hi] = [keepLo, keepHi];
    }
    if (op === 'avg') scaleChunk(tl, data, seg, v, 1 / p);
    for (let d = 1; d < q; d *= 2) {
      const partner = tl.peer(v ^ d);
      const [otherLo, otherHi] = v & d ? [lo - d, lo] : [hi, hi + d];
      const mine = span(lo, hi);
      const other = span(otherLo, otherHi);
      const sent = mine.size > 0 ? tl.send(partner, mine) : null;
      if (other.size > 0) await tl.recv(partner, other.size, data.dtype, other);
      if (sent !== null) await sent;
      [lo, hi] = [Math.min(lo, otherLo), Math.max(hi, otherHi)];
    }
  }
  await fold.spread(tl, data);
  await tl.store(t, data);
});

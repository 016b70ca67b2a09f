// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the pairwise-exchange all-to-all as an algorithm module: its meta
// beside the kernel of lib/ccl/collectives/all_to_all_pairwise.ts (the one
// allToAllSingle runs by default with peer channels).
// Steps and cost law: docs/algorithms/partners.md, "pairwise_alltoall".
//   step s = 1 .. p - 1: send the block for rank r + s to it, receive rank
//   r - s's block for r (each partner addressed by rank); any split sizes.
//   T = (p - 1)(a + (N/p) b) for N input bytes per rank and even splits, on a
//   fully connected fabric.
import { defineAlgorithm } from '../define-algorithm.js';

export const meta = defineAlgorithm({
  provides: 'all_to_all',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  peers: true,
  splits: 'uneven',
  summary: 'pairwise exchange: p - 1 steps, step s sends to r + s and receives from r - s (docs/algorithms/partners.md)',
});

export { allToAllPairwise as allToAll } from '../collectives/all_to_all_pairwise.js';

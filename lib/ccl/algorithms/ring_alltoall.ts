// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the ring store-and-forward all-to-all as an algorithm module: its meta
// beside the kernel of lib/ccl/collectives/all_to_all.ts (the one
// allToAllSingle runs by default without peer channels). Neighbours only, even
// splits only. Steps and cost law: docs/algorithms/all_to_all.md.
//   T = (p - 1) a + p (p - 1)/2 (N/p) b for N input bytes per rank.
import { defineAlgorithm } from '../define-algorithm.js';
import { ALL_TO_ALL_SENDS } from '../collectives/all_to_all.js';

export const meta = defineAlgorithm({
  provides: 'all_to_all',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  splits: 'even',
  // East only, as allToAllSingle's own launch of this kernel declares (decision 0188).
  sends: ALL_TO_ALL_SENDS,
  summary: 'ring store-and-forward: p - 1 steps east, each bundle one block shorter (docs/algorithms/all_to_all.md)',
});

export { allToAll } from '../collectives/all_to_all.js';

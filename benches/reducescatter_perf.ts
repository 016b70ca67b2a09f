// Runs on: main (run) and executor threads (worker, one call per rank).
// nccl-tests' reduce_scatter_perf, in virtual time: a buffer of the size reduced
// over the ranks, block r left on rank r, out of place and in place (ring,
// lib/ccl/collectives); busbw = algbw * (n-1)/n, the size column is the input.
import { ncclPerfBench } from './nccl/perf.js';

export { perfWorker as worker } from './nccl/workers.js';

export default ncclPerfBench('reduce_scatter');

// Runs on: main (run) and executor threads (worker, one call per rank).
// nccl-tests' all_gather_perf, in virtual time: each rank's block of the size
// gathered on every rank, out of place and in place (ring, lib/ccl/collectives);
// busbw = algbw * (n-1)/n, the size column is the gathered buffer.
import { ncclPerfBench } from './nccl/perf.js';

export { perfWorker as worker } from './nccl/workers.js';

export default ncclPerfBench('all_gather');

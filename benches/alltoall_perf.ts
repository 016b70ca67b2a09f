// Runs on: main (run) and executor threads (worker, one call per rank).
// nccl-tests' alltoall_perf, in virtual time: block j of each rank's buffer sent
// to rank j, out of place and in place (allToAllSingle: the ring, or the pairwise
// exchange with peer channels); busbw = algbw * (n-1)/n, the size column is the
// whole send buffer.
import { ncclPerfBench } from './nccl/perf.js';

export { perfWorker as worker } from './nccl/workers.js';

export default ncclPerfBench('all_to_all');

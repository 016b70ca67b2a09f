// Runs on: main (run) and executor threads (worker, one call per rank).
// nccl-tests' broadcast_perf, in virtual time: --root's buffer of the size sent
// to every rank, out of place and in place (ring, lib/ccl/collectives);
// busbw = algbw.
import { ncclPerfBench } from './nccl/perf.js';

export { perfWorker as worker } from './nccl/workers.js';

export default ncclPerfBench('broadcast');

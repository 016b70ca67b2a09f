// Runs on: main (run) and executor threads (worker, one call per rank).
// nccl-tests' all_reduce_perf, in virtual time: for each size from --min-bytes
// to --max-bytes (times --step-factor), every rank all-reduces a buffer of that
// size out of place and then in place with the configured algorithm; the table
// is nccl-tests' (benches/nccl/format.ts), busbw = algbw * 2(n-1)/n.
import { ncclPerfBench } from './nccl/perf.js';

export { perfWorker as worker } from './nccl/workers.js';
export { MAX_BYTES_CAP } from './nccl/perf.js';

export default ncclPerfBench('all_reduce');

// Runs on: main (a script, not a bench: `kernbench list` does not show it).
// Owns: the bytes a ring all-reduce allocates a message on its thread, counted
// with V8's sampling heap profiler instead of timed, for A/B tests of the hot
// path (docs/benchmarks.md, "Counting instructions instead of time").
//
//   node dist/benches/sim/allocations.js [p] [rounds] [interval] [data|no-data] [threads] [topology] [allreduce|alltoall]
//
// spawns bench sim_throughput's ring all-reduce (64 KiB f32 per rank on an
// ideal ring of p PEs, default 64; with no-data as under --no-data,
// which large p needs: the data's shared buffers outgrow a buffer's limit)
// twice: once with one counted all-reduce and once with `rounds` (default 4);
// the difference of the two samples, over the messages of rounds - 1
// all-reduces, is the bytes a message of the all-reduce alone (the barriers
// around them cancel). Prints it and the biggest allocating sites of the larger
// run, per message. The profiler samples every `interval` bytes on average
// (default 64), so a figure moves by a few bytes a message from run to run.
// `threads` (default 1) runs it as --threads N: the profiler then samples rank
// 0's thread alone, and its bytes are still divided by every message of the run.
// `topology` (default ideal) runs the ring on another topology, as `--topology`
// does: single_switch_8, say, whose pieces share a switch's links. `alltoall`
// counts allToAllSingle instead, by the pairwise exchange (ccl.peer_ranks = p): the
// MoE pattern, whose pieces on a switch go to the link arbiter.
import { resolveRunConfig, withSession } from '../../lib/bench/runner.js';
import { DEFAULT_TOPOLOGY } from '../../lib/config/paths.js';
import { ThreadResources } from '../../lib/session/thread-resources.js';
import { ringMessages } from '../sim_throughput.js';
import { allocWorker, type AllocSample, type Collective } from './alloc-worker.js';
import { positive } from './args.js';

const BYTES_PER_RANK = 64 * 1024;

const [pArg, roundsArg, intervalArg, dataArg = 'data', threadsArg, topology = 'ideal', collectiveArg = 'allreduce'] = process.argv.slice(2);
const p = positive('allocations', pArg, 64, 'p');
const rounds = positive('allocations', roundsArg, 4, 'rounds');
const interval = positive('allocations', intervalArg, 64, 'interval');
if (rounds < 2) {
  console.error(`allocations: rounds must be at least 2 (one run of 1 is subtracted), got ${rounds}`);
  process.exit(2);
}
if (dataArg !== 'data' && dataArg !== 'no-data') {
  console.error(`allocations: the fourth argument must be data or no-data, got '${dataArg}'`);
  process.exit(2);
}
const noData = dataArg === 'no-data';
if (collectiveArg !== 'allreduce' && collectiveArg !== 'alltoall') {
  console.error(`allocations: the seventh argument must be allreduce or alltoall, got '${collectiveArg}'`);
  process.exit(2);
}
const collective: Collective = collectiveArg;
const threads = positive('allocations', threadsArg, 1, 'threads');
const nElem = BYTES_PER_RANK / 4;
// The pieces the default run cuts a payload into (its vc_chunk_size), as ./instructions.ts's model is cut.
const { ccl } = await resolveRunConfig({ topology: DEFAULT_TOPOLOGY, ccl: 'default', threads: 1, sets: [], algorithm: undefined, dtype: undefined, jitterSeed: null });
const pieceElems = Math.floor(ccl.vc_chunk_size / 4);
// The pairwise exchange sends each of p - 1 peers its block of n / p elements.
const messages = collective === 'alltoall' ? p * (p - 1) * Math.max(1, Math.ceil(nElem / p / pieceElems)) : ringMessages(p, nElem, pieceElems);
const resources = new ThreadResources({ epochGc: false });
const module = new URL('./alloc-worker.js', import.meta.url).href;
const run = await withSession(resources, { topology, ccl: 'default', threads, noData, sets: [`system.sips.count=${p}`, ...(collective === 'alltoall' ? [`ccl.peer_ranks=${p}`] : [])], algorithm: undefined, dtype: undefined, jitterSeed: null }, [module], async (torch) => {
  const sample = async (n: number): Promise<AllocSample> => ((await torch.multiprocessing.spawn(allocWorker, { args: [nElem, n, interval, collective], nprocs: p })) as (AllocSample | null)[])[0] as AllocSample;
  return { one: await sample(1), many: await sample(rounds) };
});
await resources.close();
const { one, many } = run.value;
const counted = (rounds - 1) * messages;
console.log(`${collective === 'alltoall' ? 'pairwise all-to-all' : 'ring all-reduce'} on ${topology}, p = ${p}, 64 KiB f32 per rank${noData ? ' (--no-data)' : ''}, --threads ${threads}${threads > 1 ? " (rank 0's thread sampled)" : ''}: ${((many.bytes - one.bytes) / counted).toFixed(0)} bytes a message (sampled ${one.bytes} B with 1 all-reduce, ${many.bytes} B with ${rounds})`);
console.log('by allocating function, bytes a message (the same difference, site by site):');
const oneAt = new Map(one.sites);
const bySite = many.sites.map(([site, b]): [string, number] => [site, (b - (oneAt.get(site) ?? 0)) / counted]).sort((a, b) => b[1] - a[1]);
for (const [site, perMessage] of bySite.slice(0, 15)) console.log(`  ${perMessage.toFixed(1).padStart(7)}  ${site}`);

// Runs on: main (a script, not a bench: `kernbench list` does not show it).
// Owns: a fixed workload to count instructions on, for A/B tests of the
// simulator's hot path that this host's load cannot blur. Wall time here moves
// by 2x from minute to minute (docs/benchmarks.md); an instruction count under
// valgrind does not depend on what else the machine is doing.
//
//   node dist/benches/sim/instructions.js [spawns] [p] [threads | model] [rounds]
//
// runs `spawns` spawns of bench sim_throughput's worker (one ring all-reduce of
// 64 KiB per rank on an ideal ring of p PEs; default 20 spawns, p = 64,
// --threads 1) in one session and exits; with `model`, as many runs of that
// bench's one-thread model (./model-floor.ts) on main instead, no session, cut
// in the pieces the bench gives it (one a chunk at p = 64, as the spawns'), so
// that --threads 1 against its floor is a ratio of counts. Count it twice and
// subtract, so that start-up and warm-up cancel:
//
//   valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file=/dev/null \
//     node --predictable dist/benches/sim/instructions.js 10      # and again with 20
//
// (20 - 10 spawns) / 10 is one spawn's instructions in steady state: the
// all-reduce and its host set-up and checks. V8's --predictable runs the
// compiler and the GC on the isolate's own thread, so the count repeats within
// ~0.5 %; without it, ~10 % (docs/benchmarks.md). `rounds` (default 1) runs the
// all-reduce, or the model's ring, that many times a spawn: the counts of 10
// spawns at rounds 4 and at rounds 1 differ by 30 all-reduces alone, set-up and
// checks cancelled (p^rounds must stay within 2^24, f32's exact integers).
import { resolveRunConfig, withSession } from '../../lib/bench/runner.js';
import { DEFAULT_TOPOLOGY } from '../../lib/config/paths.js';
import { parseThreadLayout } from '../../lib/config/plan.js';
import { ThreadResources } from '../../lib/session/thread-resources.js';
import { workerRounds } from '../sim_throughput.js';
import { modelFloor } from './model-floor.js';
import { positive } from './args.js';

const BYTES_PER_RANK = 64 * 1024;

const [spawnsArg, pArg, threadsArg, roundsArg] = process.argv.slice(2);
const spawns = positive('instructions', spawnsArg, 20, 'spawns');
const p = positive('instructions', pArg, 64, 'p');
const rounds = positive('instructions', roundsArg, 1, 'rounds');
const allReduces = rounds === 1 ? 'a ring all-reduce' : `${rounds} ring all-reduces`;
if (threadsArg === 'model') {
  // The pieces `kernbench run --bench sim_throughput` gives the model: the default run's vc_chunk_size (sim_throughput.ts).
  const { ccl } = await resolveRunConfig({ topology: DEFAULT_TOPOLOGY, ccl: 'default', threads: 1, sets: [], algorithm: undefined, dtype: undefined, jitterSeed: null });
  let ok = true;
  for (let i = 0; i < spawns; i++) ok &&= (await modelFloor(p, BYTES_PER_RANK / 4, Math.floor(ccl.vc_chunk_size / 4), rounds)).ok;
  console.log(`${spawns} runs of the one-thread model of ${allReduces} of 64 KiB per rank, p = ${p}: ${ok ? 'OK' : 'FAIL'}`);
  process.exit(ok ? 0 : 1);
}
const threads = parseThreadLayout(threadsArg ?? '1');
// No idle-time collections: they depend on wall time (lib/sync/young-gc.ts), and so would the count.
const resources = new ThreadResources({ epochGc: false });
const bench = new URL('../sim_throughput.js', import.meta.url).href;
const run = await withSession(resources, { topology: 'ideal', ccl: 'default', threads, sets: [`system.sips.count=${p}`], algorithm: undefined, dtype: undefined, jitterSeed: null }, [bench], async (torch) => {
  let ok = true;
  for (let i = 0; i < spawns; i++) {
    const ranks = await torch.multiprocessing.spawn(workerRounds, { args: [BYTES_PER_RANK / 4, rounds], nprocs: p });
    ok &&= (ranks as { ok: boolean }[]).every((r) => r.ok);
  }
  return ok;
});
await resources.close();
console.log(`${spawns} spawns of ${allReduces} of 64 KiB per rank, p = ${p}, --threads ${String(threads)}: ${run.value ? 'OK' : 'FAIL'}`);
if (!run.value) process.exitCode = 1;

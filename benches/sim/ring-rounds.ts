// Runs on: main (a script, not a bench: `kernbench list` does not show it), and the
// executor threads (ringRounds, one call per rank).
// Owns: a fixed timing-only workload for counts that do not depend on the load, as p
// grows: one spawn of p ranks on the ideal topology, each making its world group and a
// 64 KiB f32 tensor, then `rounds` ring all-reduces in a row with `--no-data` (issue 26
// item 5: the cost of a message must not grow with p).
//
//   node dist/benches/sim/ring-rounds.js P [threads] [rounds] [PATH=VALUE ...]
//
// Each PATH=VALUE after the rounds is a `--set` of the run (`timing.link_sharing=none`
// counts the same ring without the shared links' proofs).
//
// Count it twice under valgrind, at two round counts, and subtract: start-up, spawn and
// the end cancel, the difference is all-reduces alone, 2 (p - 1) p messages each
// (one piece a chunk at 64 KiB a rank). Rounds 0 is the start-up alone (the first
// round then also pays the collective's first compilation, a small part at large p):
//
//   valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=F \
//     node --predictable dist/benches/sim/ring-rounds.js 1024 1 1      # and again with 3
//
// (docs/benchmarks.md, "Cache misses a message"). It prints each round's crit_ns, so a
// change of the virtual times shows.
import { pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';
import { withSession } from '../../lib/bench/runner.js';
import { parseThreadLayout } from '../../lib/config/plan.js';
import type { Torch } from '../../lib/host/torch.js';
import { ThreadResources } from '../../lib/session/thread-resources.js';

const ELEMENTS = 16 * 1024;

/** A rank: its world group and tensor, then `rounds` all-reduces; the last one's crit_ns. */
export async function ringRounds(rank: number, rounds: number, torch: Torch): Promise<number> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([ELEMENTS], { dtype: 'f32' });
  let critNs = 0;
  for (let i = 0; i < rounds; i++) critNs = (await torch.distributed.allReduce(t, { op: 'sum' })).critNs;
  return critNs;
}

function count(arg: string | undefined, fallback: number | undefined, least: number, what: string): number {
  if (arg === undefined && fallback !== undefined) return fallback;
  const n = Number(arg);
  if (Number.isInteger(n) && n >= least) return n;
  console.error(`ring-rounds: ${what} must be an integer of at least ${least}, got '${arg}'`);
  process.exit(2);
}

async function main(): Promise<void> {
  const [pArg, threadsArg, roundsArg, ...sets] = process.argv.slice(2);
  for (const s of sets) {
    if (!/^[A-Za-z_][\w.]*=./.test(s)) {
      console.error(`ring-rounds: each argument after the rounds is a PATH=VALUE --set, got '${s}'`);
      process.exit(2);
    }
  }
  const p = count(pArg, undefined, 1, 'p');
  const rounds = count(roundsArg, 1, 0, 'rounds');
  const threads = parseThreadLayout(threadsArg ?? '1');
  // No idle-time collections: they depend on wall time (lib/sync/young-gc.ts), and so would a count.
  const resources = new ThreadResources({ epochGc: false });
  const config = { topology: 'ideal', ccl: 'default', threads, sets: [`system.sips.count=${p}`, ...sets], algorithm: undefined, dtype: undefined, jitterSeed: null, noData: true };
  const run = await withSession(resources, config, [import.meta.url], async (torch) => {
    const crit = (await torch.multiprocessing.spawn(ringRounds, { args: [rounds], nprocs: p })) as number[];
    return crit.reduce((a, b) => Math.max(a, b), 0);
  });
  await resources.close();
  console.log(`${rounds} ring all-reduce(s) of 64 KiB per rank, --no-data, p = ${p}, --threads ${String(threads)}: crit ${run.value.toFixed(3)} ns`);
}

// The executors import this module for ringRounds, and so does main's spawn (to find it):
// only the script run from the command line runs, and not as a top-level await, which
// would hold that import until the run ends.
if (isMainThread && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}

// Runs on: main (a script, not a bench: `kernbench list` does not show it).
// Owns: a fixed barrier workload to measure CPU time on, for A/B tests of the
// host barrier that this host's load blurs less than wall time does.
//
//   node dist/benches/barrier/cpu.js host|atomics|message|tree|chain|serial [n] [count]
//
// runs `count` barriers of n participants (default 16, 1000): kernbench's
// host barrier (one spawn under --threads rank, bench barrier_throughput's
// worker) or one of the bare barriers or wake-up patterns (./bare-barriers.ts),
// and exits. Run it under `perf stat -e task-clock,context-switches` twice
// with two counts and subtract, so that start-up cancels: (CPU(4000) - CPU(1000)) / 3000 is one
// barrier's CPU time summed over every thread. With KERNBENCH_PERF_CTL set to
// perf's control fifo, a warm-up run of `count` barriers goes first and only
// the second run is recorded:
//
//   mkfifo /tmp/ctl; perf record -e cpu-clock -D -1 --control=fifo:/tmp/ctl \
//     env KERNBENCH_PERF_CTL=/tmp/ctl node --perf-basic-prof dist/benches/barrier/cpu.js host
//
// KERNBENCH_PERF_CTL=/dev/null runs the warm-up too, with nothing recorded:
// the printed wall time is then a warm run's.
import { appendFileSync } from 'node:fs';
import { withSession } from '../../lib/bench/runner.js';
import { ThreadResources } from '../../lib/session/thread-resources.js';
import { worker } from '../barrier_throughput.js';
import { bareBarrier } from './bare-barriers.js';

function positive(arg: string | undefined, fallback: number, what: string): number {
  if (arg === undefined) return fallback;
  const n = Number(arg);
  if (Number.isInteger(n) && n >= 1) return n;
  console.error(`barrier cpu: ${what} must be a positive integer, got '${arg}'`);
  process.exit(2);
}

const [kind, nArg, countArg] = process.argv.slice(2);
const n = positive(nArg, 16, 'n');
const count = positive(countArg, 1000, 'count');
const perfCtl = process.env.KERNBENCH_PERF_CTL;
/** Tell perf to start or stop recording (no-op without KERNBENCH_PERF_CTL). */
const perf = (cmd: 'enable' | 'disable'): void => {
  if (perfCtl) appendFileSync(perfCtl, `${cmd}\n`);
};
const runs = perfCtl ? 2 : 1;
let t0 = performance.now();
/** The ranks' own window (first timed barrier to last), ms; the host run only. */
let timed = NaN;
if (kind === 'host') {
  const resources = new ThreadResources({ epochGc: true });
  const bench = new URL('../barrier_throughput.js', import.meta.url).href;
  await withSession(resources, { topology: 'ideal', ccl: 'default', threads: 'rank', sets: [`system.sips.count=${n}`], algorithm: undefined, dtype: undefined, jitterSeed: null }, [bench], async (torch) => {
    for (let r = 0; r < runs; r++) {
      if (r === runs - 1) {
        perf('enable');
        t0 = performance.now();
      }
      const ranks = await torch.multiprocessing.spawn(worker, { args: [count], nprocs: n });
      timed = Math.max(...ranks.map((x) => x.t1)) - Math.min(...ranks.map((x) => x.t0));
    }
    perf('disable');
  });
  await resources.close();
} else if (kind === 'atomics' || kind === 'message' || kind === 'tree' || kind === 'chain' || kind === 'serial' || kind === 'sync' || kind === 'sync-await') {
  for (let r = 0; r < runs; r++) {
    await bareBarrier(kind, n, count, () => {
      if (r < runs - 1) return;
      perf('enable'); // the threads are up: their start-up is not counted
      t0 = performance.now();
    });
  }
  perf('disable');
} else {
  console.error(`barrier cpu: the first argument must be host, atomics, message, tree, chain, serial, sync or sync-await, got '${kind}'`);
  process.exit(2);
}
const wall = Number.isNaN(timed) ? performance.now() - t0 : timed;
console.log(`${count} ${kind} barriers, n = ${n}: ${((wall / count) * 1000).toFixed(1)} us per barrier (wall${Number.isNaN(timed) ? ', start-up included' : ''})`);

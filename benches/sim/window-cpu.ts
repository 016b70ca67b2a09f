// Runs on: main (a script, not a bench: `kernbench list` does not show it).
// Owns: splitting bench sim_throughput's "process CPU a message" by thread.
//
//   node dist/benches/sim/window-cpu.js [spawns] [threads]     # default 9, 2
//
// runs `spawns` spawns of sim_throughput's ring all-reduce (p = 64, 64 KiB f32 a
// rank, idle-time collections on, as the bench runs) and prints, for the first
// spawn (the runtime still cold: what a single run of a bench pays) and as the
// median over the spawns after two warm-ups, the bench's figure (process CPU over its
// window, rank 0's all-reduce start to the last rank's end, per message) and its
// split: the executors (every thread a rank ran on) and every other
// thread (V8's platform threads: concurrent marking, parallel scavenges,
// compilation; the coordinator; main). Also the executors' wait for a core: the
// time they were runnable but another thread held the cores (schedstat's second
// field), which is where a layout with as many executors as cores loses to the
// other threads. Linux only (/proc). Wall-time noise moves these figures; compare
// builds run in alternation (docs/benchmarks.md).
import { resolveRunConfig, withSession } from '../../lib/bench/runner.js';
import { parseThreadLayout } from '../../lib/config/plan.js';
import { ThreadResources } from '../../lib/session/thread-resources.js';
import { ringMessages } from '../sim_throughput.js';
import { positive } from './args.js';
import { windowWorker, type ThreadCpu } from './window-worker.js';

const P = 64;
const N_ELEM = (64 * 1024) / 4;
const WARM_UP = 2;

const [spawnsArg, threadsArg] = process.argv.slice(2);
const spawns = positive('window-cpu', spawnsArg, 9, 'spawns');
const threads = parseThreadLayout(threadsArg ?? '2');
const resources = new ThreadResources();
const worker = new URL('./window-worker.js', import.meta.url).href;
const rows: { processUs: number; executorsUs: number; othersUs: number; waitUs: number }[] = [];
const config = { topology: 'ideal', ccl: 'default', threads, sets: [`system.sips.count=${P}`], algorithm: undefined, dtype: undefined, jitterSeed: null };
const pieceElems = Math.floor((await resolveRunConfig(config)).ccl.vc_chunk_size / 4);
const run = await withSession(resources, config, [worker], async (torch) => {
  let ok = true;
  for (let i = 0; i < spawns; i++) {
    const ranks = (await torch.multiprocessing.spawn(windowWorker, { args: [N_ELEM], nprocs: P })) as Awaited<ReturnType<typeof windowWorker>>[];
    ok &&= ranks.every((r) => r.ok);
    const a = ranks[0].start as ThreadCpu;
    const b = ranks[P - 1].end as ThreadCpu;
    let executors = 0;
    let others = 0;
    let wait = 0;
    const executorThreads = new Set(ranks.map((r) => r.thread));
    for (const [t, ns] of Object.entries(b.ns)) {
      const us = (ns - (a.ns[t] ?? 0)) / 1e3;
      if (executorThreads.has(t)) {
        executors += us;
        wait += (b.waitNs[t] - (a.waitNs[t] ?? 0)) / 1e3;
      } else others += us;
    }
    rows.push({ processUs: b.processUs - a.processUs, executorsUs: executors, othersUs: others, waitUs: wait });
  }
  return ok;
});
await resources.close();
const messages = ringMessages(P, N_ELEM, pieceElems);
const median = (k: keyof (typeof rows)[number]): number => {
  const v = rows.slice(WARM_UP).map((r) => r[k] / messages).sort((x, y) => x - y);
  return v[Math.floor(v.length / 2)];
};
const split = (f: (k: keyof (typeof rows)[number]) => number): string =>
  `process ${f('processUs').toFixed(1)} (executors ${f('executorsUs').toFixed(1)}, other threads ${f('othersUs').toFixed(1)}); the executors waited ${f('waitUs').toFixed(1)} for a core`;
console.log(`--threads ${String(threads)}, p = ${P}, ${messages} messages, us of CPU a message in the window: first spawn ${split((k) => rows[0][k] / messages)}; median over ${rows.length - WARM_UP} spawns ${split(median)}${run.value ? '' : ' -- FAILED CHECK'}`);
if (!run.value) process.exitCode = 1;

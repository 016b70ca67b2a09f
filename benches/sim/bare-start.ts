// Runs on: main of its own process (`node dist/benches/sim/bare-start.js P STEPS`).
// Owns: the floor of a whole run under one thread per rank — p bare worker
// threads started, driven through the ring all-reduce's dependency shape
// (./bare-ring.ts, one cross-thread wake a message, nothing simulated) and
// stopped, with the process's wall time and peak resident memory. A
// `kernbench run` of p ranks under `--threads rank` is compared with it as a
// whole process (its start-up, its threads, its run), so the floor is a whole
// process too: its own, so that its peak RSS is its own (decision 0130).
//
// Prints one JSON line: p, steps, the wall ms of the threads' start-up (from
// the first Worker created to the last one ready), of the ring, and of the
// whole process so far, and the peak RSS in MiB (getrusage's maxrss).
import { performance } from 'node:perf_hooks';
import { bareRingRun } from './bare-ring.js';

export interface BareStart {
  p: number;
  steps: number;
  startMs: number;
  ringMs: number;
  processMs: number;
  peakRssMiB: number;
}

async function main(): Promise<void> {
  const p = Number(process.argv[2] ?? 256);
  // The all-reduce's messages a rank: 2 (p - 1) pieces of one 64 KiB piece a chunk by default.
  const steps = Number(process.argv[3] ?? 2 * (p - 1));
  if (!Number.isInteger(p) || p < 2 || !Number.isInteger(steps) || steps < 1) throw new RangeError(`usage: bare-start.js P STEPS (P >= 2, STEPS >= 1), got ${process.argv.slice(2).join(' ')}`);
  const run = await bareRingRun(p, steps);
  // processMs: from the process's own start (node's start-up included), as `time` sees it.
  const out: BareStart = { p, steps, startMs: Math.round(run.startMs), ringMs: Math.round(run.ringMs), processMs: Math.round(performance.now()), peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

if (process.argv[1] !== undefined && new URL(import.meta.url).pathname === process.argv[1]) await main();

#!/usr/bin/env node
// Runs on: main of its own process. Owns: where a run's cores go over its wall
// time, thread by thread: the command runs under `perf record` (on-CPU samples,
// 999 a second, with call stacks; node's --perf-basic-prof names the JavaScript),
// and each sample is counted in its time bin by what ran: the executors (threads
// running the executor's bundle), main, the coordinator, and V8's background
// threads by their job (marking, scavenging, sweeping, optimising). A full bin of
// one thread is 1000 x the bin's seconds samples; the machine's cores bound a bin's
// sum. docs/benchmarks.md "A --threads 2 run's cores over its wall time" uses it.
//
//   node scripts/thread-timeline.mjs [--bin S] -- node --perf-basic-prof bin/kernbench.js run ...
//
// Linux, with perf installed and allowed to sample (perf_event_paranoid <= 1 or root).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const at = args.indexOf('--');
const command = args.slice(at + 1);
if (at < 0 || command.length === 0) throw new Error('usage: thread-timeline.mjs [--bin S] -- COMMAND ...');
const binArg = args.indexOf('--bin');
const bin = binArg >= 0 && binArg < at ? Number(args[binArg + 1]) : 0.2;
if (!(bin > 0)) throw new Error(`--bin must be a positive number of seconds, got '${args[binArg + 1]}'`);

const dir = mkdtempSync(join(tmpdir(), 'thread-timeline-'));
const data = join(dir, 'perf.data');
try {
  const rec = spawnSync('perf', ['record', '-q', '-k', 'mono', '-e', 'cpu-clock', '-F', '999', '-g', '-o', data, '--', ...command], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (rec.error) throw rec.error;
  if (rec.status !== 0) throw new Error(`perf record ${command.join(' ')} exited with ${rec.status}`);
  const script = spawnSync('perf', ['script', '-i', data, '-F', 'tid,time,ip,sym'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (script.error) throw script.error;
  const samples = []; // { tid, t, frames }
  let cur = null;
  for (const line of script.stdout.split('\n')) {
    if (line.trim() === '') {
      if (cur) samples.push(cur);
      cur = null;
    } else {
      // A sample's first line is its thread and time (perf right-aligns them), then a frame a line.
      const m = /^\s*(\d+)\s+([\d.]+):\s*$/.exec(line);
      if (m) cur = { tid: Number(m[1]), t: Number(m[2]), frames: [] };
      else if (cur) cur.frames.push(line.trim());
    }
  }
  if (cur) samples.push(cur);
  if (samples.length === 0) throw new Error('perf recorded no samples');
  const t0 = Math.min(...samples.map((s) => s.t));
  const main = Math.min(...samples.map((s) => s.tid));
  const executors = new Set(samples.filter((s) => s.tid !== main && s.frames.some((f) => f.includes('runtime/executor'))).map((s) => s.tid));
  const coordinators = new Set(samples.filter((s) => s.frames.some((f) => f.includes('coordinator-worker'))).map((s) => s.tid));
  const jobs = [
    ['marking', /ConcurrentMarking|IncrementalMarking/],
    ['scavenging', /Scaveng/],
    ['sweeping', /Sweeper/],
    ['optimising', /OptimizingCompileDispatcher/],
  ];
  const kindOf = (s) => {
    if (s.tid === main) return 'main';
    if (executors.has(s.tid)) return 'executors';
    if (coordinators.has(s.tid)) return 'coordinator';
    const job = jobs.find(([, re]) => s.frames.some((f) => re.test(f)));
    return job ? job[0] : 'other';
  };
  const kinds = ['executors', 'main', 'coordinator', ...jobs.map(([k]) => k), 'other'];
  const bins = [];
  for (const s of samples) {
    const b = Math.floor((s.t - t0) / bin);
    bins[b] ??= Object.fromEntries(kinds.map((k) => [k, 0]));
    bins[b][kindOf(s)]++;
  }
  console.log(`${executors.size} executor thread(s); samples a ${bin} s bin (a thread on CPU the whole bin: ${Math.round(999 * bin)})`);
  console.log(['from s', ...kinds].map((k) => k.padStart(12)).join(''));
  bins.forEach((row, b) => console.log([(b * bin).toFixed(1), ...kinds.map((k) => String(row?.[k] ?? 0))].map((v) => v.padStart(12)).join('')));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

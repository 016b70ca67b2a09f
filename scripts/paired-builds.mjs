#!/usr/bin/env node
// Runs on: main (a plain Node script, outside the package). Owns: the paired
// comparison of two builds of kernbench — "is the simulator no slower?" (issue
// 22, item 6). Each pair runs the same two commands on the old build and on the
// new one, alternating which goes first, so both see the same minutes of the
// machine:
//
//   1. sim_throughput at one ring size: its ratios to its floors
//      (threads_1_vs_model, threads_2_vs_model, threads_rank_vs_bare) and its
//      process CPU per message;
//   2. ccl_allreduce --no-data --threads 1 on the ideal ring under
//      `node --trace-gc --trace-gc-nvp`: the bytes V8 allocated (the `allocated=`
//      of every GC line, start-up included) divided by the ring's 2 (p - 1) p
//      messages, for every isolate together and for the executor's alone. The
//      bytes after the last GC are not counted: the ring is sized so that they
//      are a small part of the total.
//
//   node scripts/paired-builds.mjs --old DIR --new DIR [--pairs 4] [--sizes 16]
//        [--spawns 1,3] [--alloc-sips 256] [--alloc-only]
//
// Both builds must be built (npm run build). A build whose sim_throughput has no
// --sizes option (before the bench options replaced the KERNBENCH_SIM_* knobs)
// is given the same sizes through those variables. Prints every run, then per
// figure the median of each build and new / old.
import { execFileSync, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: {
    old: { type: 'string' },
    new: { type: 'string' },
    pairs: { type: 'string', default: '4' },
    sizes: { type: 'string', default: '16' },
    spawns: { type: 'string', default: '1,3' },
    'alloc-sips': { type: 'string', default: '256' },
    /** Only the allocation count (no sim_throughput): it takes seconds a run, not minutes. */
    'alloc-only': { type: 'boolean', default: false },
  },
});
if (!opts.old || !opts.new) {
  console.error('usage: node scripts/paired-builds.mjs --old DIR --new DIR [--pairs N] [--sizes P] [--spawns W,T] [--alloc-sips P]');
  process.exit(2);
}
const builds = { old: resolve(opts.old), new: resolve(opts.new) };
const pairs = Number(opts.pairs);
const allocSips = Number(opts['alloc-sips']);

/** The figures sim_throughput prints as `name: value` that this comparison keeps. */
const SIM_FIGURES = ['threads_1_vs_model', 'threads_2_vs_model', 'threads_rank_vs_bare', 'threads_1_cpu_us_per_msg', 'threads_2_cpu_us_per_msg', 'threads_rank_cpu_us_per_msg'];

function commit(dir) {
  return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
}

function hasSizesOption(dir) {
  const r = spawnSync('node', ['bin/kernbench.js', 'run', '--bench', 'sim_throughput', '--help'], { cwd: dir, encoding: 'utf8' });
  return r.stdout.includes('--sizes');
}

function load() {
  return execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ')[0];
}

function run(dir, args, env = {}) {
  const r = spawnSync('node', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${dir}: node ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return r.stdout;
}

function simThroughput(dir, flags) {
  const args = ['bin/kernbench.js', 'run', '--bench', 'sim_throughput'];
  const out = flags ? run(dir, [...args, '--sizes', opts.sizes, '--spawns', opts.spawns]) : run(dir, args, { KERNBENCH_SIM_SIZES: opts.sizes, KERNBENCH_SIM_SPAWNS: opts.spawns });
  const fig = {};
  for (const name of SIM_FIGURES) {
    const m = new RegExp(`^\\s*${name}: ([\\d.]+)$`, 'm').exec(out);
    if (!m) throw new Error(`${dir}: sim_throughput printed no ${name}`);
    fig[name] = Number(m[1]);
  }
  fig.sim_crit = /crit_ns: (\S+) .*digest (\w+)/.exec(out)?.slice(1).join(' ');
  return fig;
}

function allocation(dir) {
  const out = run(dir, [
    '--trace-gc', '--trace-gc-nvp', 'bin/kernbench.js', 'run', '--bench', 'ccl_allreduce', '--topology', 'ideal',
    '--set', `system.sips.count=${allocSips}`, '--set', 'ccl.n_elem=16384', '--dtype', 'f32', '--no-data', '--threads', '1',
  ]);
  // Per isolate (the address after the pid): the executor running the ring is the one
  // that allocates most; the others (main, the coordinator) mostly wait, and what they
  // allocate waiting grows with the wall time, so with the load.
  const byIsolate = new Map();
  for (const m of out.matchAll(/^\[\d+:(0x[0-9a-f]+)\].* allocated=(\d+) /gm)) byIsolate.set(m[1], (byIsolate.get(m[1]) ?? 0) + Number(m[2]));
  const all = [...byIsolate.values()];
  const messages = 2 * (allocSips - 1) * allocSips;
  return {
    alloc_bytes_per_msg: all.reduce((a, b) => a + b, 0) / messages,
    executor_alloc_bytes_per_msg: Math.max(...all) / messages, alloc_crit: /crit_ns: (\S+) .*digest (\w+)/.exec(out)?.slice(1).join(' ') };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const flags = { old: hasSizesOption(builds.old), new: hasSizesOption(builds.new) };
console.log(`old ${builds.old} (${commit(builds.old)}), new ${builds.new} (${commit(builds.new)}); ${pairs} pairs, sim_throughput p=${opts.sizes} spawns ${opts.spawns}, allocation at p=${allocSips}`);
const rows = { old: [], new: [] };
for (let i = 0; i < pairs; i++) {
  const order = i % 2 === 0 ? ['old', 'new'] : ['new', 'old'];
  for (const which of order) {
    const before = load();
    const fig = { ...(opts['alloc-only'] ? {} : simThroughput(builds[which], flags[which])), ...allocation(builds[which]) };
    const after = load();
    rows[which].push(fig);
    console.log(`pair ${i + 1} ${which} (load ${before}-${after}): ${Object.entries(fig).map(([k, v]) => `${k}=${typeof v === 'number' ? +v.toFixed(3) : v}`).join(' ')}`);
  }
}
console.log('\nfigure | old median | new median | new / old');
for (const name of [...(opts['alloc-only'] ? [] : SIM_FIGURES), 'alloc_bytes_per_msg', 'executor_alloc_bytes_per_msg']) {
  const o = median(rows.old.map((r) => r[name]));
  const n = median(rows.new.map((r) => r[name]));
  console.log(`${name} | ${+o.toFixed(3)} | ${+n.toFixed(3)} | ${(n / o).toFixed(3)}`);
}

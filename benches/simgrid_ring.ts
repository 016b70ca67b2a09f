// Runs on: main (evaluate). Opens no session of its own: it runs whole processes.
// kernbench against SimGrid (C++, S4U, CM02) on the same ring all-reduce, side
// by side in one run (issue 14, item 3): ./simgrid/ring_once.ts --no-data under
// --threads 1 and --threads 2, and ./simgrid/ring_allreduce.cpp, each a
// process of its own, timed from start to exit (start-up included on both
// sides) with its peak resident set size from /usr/bin/time. The three run in
// rounds, in a rotated order, and each ratio is the median of the rounds'
// ratios: on this shared host the same program runs up to 2x faster or slower
// from one minute to the next, so only runs of the same minutes compare.
//
// The case is the configured topology's ring (one PE per SIP, --set
// system.sips.count=P), with alpha and beta of its sip_sip link; the SimGrid
// program must report the virtual time kernbench does, or the result is not ok.
//
//   kernbench run --bench simgrid_ring --topology ideal --set system.sips.count=1024 [--bytes 65536] [--rounds 3]
//
// Needs g++ and SimGrid's headers and library (Debian: apt-get install g++
// libsimgrid-dev); the program is compiled once into the system's temp folder.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { resolveRunConfig } from '../lib/bench/runner.js';
import { median } from '../lib/bench/stats.js';
import { KernbenchError } from '../lib/errors.js';
import { checkRingBytes } from './simgrid/ring_once.js';

export const options = (z: Zod) => z.object({
  bytes: z.number().int().positive().default(65536).describe('bytes per rank (the all-reduced buffer)'),
  rounds: z.number().int().positive().default(3).describe('timed rounds (each runs SimGrid and kernbench --threads 1 and 2 once)'),
});

export default defineBench({
  description: 'wall time and peak RSS: kernbench --no-data (--threads 1, 2) vs SimGrid C++ (CM02) on the same ring all-reduce',
  options,
  evaluate,
});

const SOURCE = fileURLToPath(new URL('../../benches/simgrid/ring_allreduce.cpp', import.meta.url));
const KERNBENCH = fileURLToPath(new URL('../../bin/kernbench.js', import.meta.url));
/** One all-reduce and nothing else, as SimGrid's program (compiled beside this file). */
const RING_ONCE = fileURLToPath(new URL('./simgrid/ring_once.js', import.meta.url));
const TIME = '/usr/bin/time';

/** One process's run: wall seconds, peak RSS in KiB, and the virtual time it reported in ns. */
interface Measured {
  wallS: number;
  rssKiB: number;
  virtualNs: number;
}

interface Contender {
  name: string;
  argv: string[];
  /** The virtual time (ns) in the process's output. */
  parse(stdout: string): number;
}

async function evaluate(ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const { bytes, rounds } = ctx.options;
  const { topology } = await resolveRunConfig(ctx.config);
  const p = topology.system.sips.count;
  const onePe = topology.sip.cube_mesh.w * topology.sip.cube_mesh.h * topology.cube.pe_layout.corners.length * topology.cube.pe_layout.pe_per_corner === 1;
  if (topology.system.sips.topology !== 'ring_1d' || !onePe) {
    throw new KernbenchError('ERR_BENCH_TOPOLOGY', `simgrid_ring models a ring of SIPs with one PE each (topology ideal); got ${topology.system.sips.topology} with ${onePe ? 'one PE' : 'several PEs'} per SIP`);
  }
  checkRingBytes(bytes, p);
  const link = topology.timing.links.sip_sip;
  const binary = compileSimgrid();

  const kb = (threads: number): Contender => ({
    name: `kernbench --threads ${threads}`,
    argv: kernbenchArgv(ctx.config, bytes, threads),
    // Not --json: it records the run's statistics (a trace recorder on every thread), which costs GiBs at p = 1024.
    parse: (out) => Number(/crit_ns: (\S+)/.exec(out)?.[1]),
  });
  const sg: Contender = {
    name: 'SimGrid',
    argv: [binary, String(p), String(bytes), String(link.latency_ns), String(link.bandwidth_gb_s), '--log=root.thres:critical'],
    parse: (out) => Number(/simulated_ns (\S+)/.exec(out)?.[1]),
  };
  const contenders = [sg, kb(1), kb(2)];

  const lines = [
    `# SimGrid vs kernbench: ring all-reduce, p = ${p}, ${bytes} bytes per rank, alpha ${link.latency_ns} ns, beta ${link.bandwidth_gb_s} GB/s (topology ${ctx.config.topology}); kernbench with --no-data`,
    `# round   SimGrid (s)   kb --threads 1 (s)   kb --threads 2 (s)   t1/SimGrid   t2/SimGrid`,
  ];
  const runs: Measured[][] = contenders.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const c = (round + k) % contenders.length; // rotate who goes first
      ctx.log(`round ${round + 1}/${rounds}: ${contenders[c].name}`);
      runs[c].push(await measure(contenders[c]));
    }
    const [s, t1, t2] = runs.map((r) => r[round].wallS);
    lines.push(`${String(round + 1).padStart(7)} ${s.toFixed(2).padStart(13)} ${t1.toFixed(2).padStart(20)} ${t2.toFixed(2).padStart(20)} ${(t1 / s).toFixed(2).padStart(12)} ${(t2 / s).toFixed(2).padStart(12)}`);
  }
  const ratio = (c: number): number => median(runs[c].map((m, i) => m.wallS / runs[0][i].wallS));
  const rssMiB = (c: number): number => Math.max(...runs[c].map((m) => m.rssKiB)) / 1024;
  const virtual = runs.map((r) => r[0].virtualNs);
  const same = virtual.every((v) => Math.abs(v - virtual[1]) <= 1e-3); // SimGrid prints ns to 3 decimals
  lines.push(`# median wall ratio kernbench / SimGrid: --threads 1 ${ratio(1).toFixed(2)}, --threads 2 ${ratio(2).toFixed(2)} (below 1: kernbench is faster)`);
  lines.push(`# peak RSS (largest over rounds): SimGrid ${rssMiB(0).toFixed(0)} MiB, kernbench --threads 1 ${rssMiB(1).toFixed(0)} MiB, --threads 2 ${rssMiB(2).toFixed(0)} MiB`);
  lines.push(`# virtual time: SimGrid ${virtual[0].toFixed(3)} ns, kernbench ${virtual[1].toFixed(3)} ns (--threads 1) and ${virtual[2].toFixed(3)} ns (--threads 2): ${same ? 'equal' : 'DIFFERENT'}`);
  return [
    {
      bench: ctx.bench,
      algorithm: 'ring',
      topology: ctx.config.topology,
      worldSize: p,
      nElem: bytes / 4,
      dtype: 'f32',
      ok: same,
      critNs: virtual[1],
      lines,
      extra: {
        threads_1_over_simgrid: Number(ratio(1).toFixed(3)),
        threads_2_over_simgrid: Number(ratio(2).toFixed(3)),
        simgrid_rss_mib: Math.round(rssMiB(0)),
        threads_1_rss_mib: Math.round(rssMiB(1)),
        threads_2_rss_mib: Math.round(rssMiB(2)),
      },
    },
  ];
}

/** kernbench's process: one all-reduce of `bytes` a rank (./simgrid/ring_once.ts), timing only, under `--threads threads`, on the run's topology and settings. */
export function kernbenchArgv(config: Pick<BenchContext['config'], 'topology' | 'ccl' | 'sets'>, bytes: number, threads: number): string[] {
  return [process.execPath, KERNBENCH, 'run', '--bench', RING_ONCE, '--topology', config.topology, ...(config.ccl === 'default' ? [] : ['--ccl', config.ccl]), ...config.sets.flatMap((s) => ['--set', s]), '--bytes', String(bytes), '--threads', String(threads), '--no-data'];
}

/** Run one contender under /usr/bin/time; its wall time from spawn to exit. */
async function measure(c: Contender): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'kb-simgrid-'));
  const rssFile = join(dir, 'rss');
  try {
    const t0 = performance.now();
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn(TIME, ['-f', '%M', '-o', rssFile, ...c.argv], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(`${out}${err}`) : reject(new KernbenchError('ERR_EXTERNAL_PROGRAM', `${c.name} exited with ${code}: ${err.trim().split('\n').slice(-3).join(' / ')}`))));
    });
    const wallS = (performance.now() - t0) / 1000;
    const virtualNs = c.parse(stdout);
    if (!Number.isFinite(virtualNs)) throw new KernbenchError('ERR_EXTERNAL_PROGRAM', `${c.name} printed no virtual time, got: ${stdout.slice(-200)}`);
    return { wallS, rssKiB: Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop()), virtualNs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Compile ./simgrid/ring_allreduce.cpp once per version of its text; the binary's path. */
function compileSimgrid(): string {
  if (!existsSync(TIME)) throw new KernbenchError('ERR_OPTIONAL_DEPENDENCY', `simgrid_ring measures peak RSS with ${TIME} (Debian: apt-get install time), got no such file`);
  if (!existsSync(SOURCE)) throw new KernbenchError('ERR_OPTIONAL_DEPENDENCY', `simgrid_ring compiles ${SOURCE}, which ships with the repository, not the npm package; got no such file`);
  const src = readFileSync(SOURCE);
  const binary = join(tmpdir(), `kernbench-simgrid-ring-${createHash('sha256').update(src).digest('hex').slice(0, 12)}`);
  if (existsSync(binary)) return binary;
  try {
    execFileSync('g++', ['-O2', '-std=c++17', '-o', binary, SOURCE, '-lsimgrid'], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const why = (e as { stderr?: Buffer }).stderr?.toString().trim().split('\n').slice(0, 3).join(' / ') ?? String(e);
    throw new KernbenchError('ERR_OPTIONAL_DEPENDENCY', `simgrid_ring needs g++ and SimGrid (Debian: apt-get install g++ libsimgrid-dev); compiling ${SOURCE} failed: ${why}`);
  }
  return binary;
}

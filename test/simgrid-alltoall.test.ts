// The pairwise all-to-all against SimGrid (docs/simgrid.md, "All-to-all"). The
// program scripts/simgrid/gen.mjs writes for it is checked without SimGrid: p (p - 1)
// blocks, one from each rank to each other, over declared routes. Then one small case
// runs in the SimGrid oracle (scripts/simgrid/oracle.cpp, C++: skipped only when
// g++ or libsimgrid-dev is absent, as the comparison needs them) and in kernbench's
// alltoall_perf with peer channels, on the ideal single switch, to 1e-6.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

// Compiled to dist/test/: the project root is two levels up.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const rt = new TestRuntime();
t.teardown(() => rt.close());

const SWITCH = (p: number): string[] => ['system.sips.topology=single_switch', `system.sips.count=${p}`, `ccl.peer_ranks=${p}`, 'ccl.n_slots=17'];

/** gen.mjs's program and platform for the all-to-all of `bytes` a rank's send buffer. */
function gen(sets: string[], bytes: number, dir: string): { program: string[][]; routes: Set<string> } {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // tap's process tracking: not needed by the script
  execFileSync('node', [join(ROOT, 'scripts/simgrid/gen.mjs'), '--topology', 'ideal', ...sets.flatMap((s) => ['--set', s]), '--algo', 'alltoall', '--bytes', String(bytes), '--out', dir], { env });
  const program = readFileSync(join(dir, 'program.txt'), 'utf8').trim().split('\n').map((l) => l.split(' '));
  const xml = readFileSync(join(dir, 'platform.xml'), 'utf8');
  return { program, routes: new Set([...xml.matchAll(/<route src="(\w+)" dst="(\w+)"/g)].map((m) => `${m[1]} ${m[2]}`)) };
}

t.test('the all-to-all program sends one block from each rank to each other, a receive for each, over declared routes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-simgrid-a2a-'));
  try {
    const p = 6;
    const { program, routes } = gen(SWITCH(p), 6 * 4 * 10, dir);
    const sends = program.filter((op) => op[1] === 'isend');
    const pairs = sends.map((op) => `${op[0]} ${op[3]}`).sort();
    const want = [];
    for (let a = 0; a < p; a++) for (let b = 0; b < p; b++) if (a !== b) want.push(`r${a} r${b}`);
    t.same(pairs, want.sort());
    t.ok(sends.every((op) => op[4] === '40'), 'each block is N / p bytes');
    t.same(program.filter((op) => op[1] === 'irecv').map((op) => `${op[3]} ${op[0]}`).sort(), want);
    t.ok(want.every((k) => routes.has(k)), 'every pair has its route');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Why the oracle cannot be built here, or undefined when it can. */
function missing(): string | undefined {
  if (spawnSync('pkg-config', ['--exists', 'simgrid']).status !== 0) return 'libsimgrid-dev is not installed (pkg-config simgrid)';
  if (spawnSync('g++', ['--version']).status !== 0) return 'g++ is not installed';
  return undefined;
}

/** The oracle compiled once into the temp folder (keyed by its source). */
function oracle(): string {
  const source = join(ROOT, 'scripts/simgrid/oracle.cpp');
  const binary = join(tmpdir(), `kernbench-simgrid-oracle-${createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 12)}`);
  if (!existsSync(binary)) {
    const flags = execFileSync('pkg-config', ['--cflags', '--libs', 'simgrid'], { encoding: 'utf8' }).trim().split(/\s+/).filter(Boolean);
    execFileSync('g++', ['-O2', '-std=c++17', source, '-o', binary, ...flags]);
  }
  return binary;
}

const why = missing();
t.test('on the ideal single switch, p = 8 x 64 KiB, the pairwise all-to-all agrees with SimGrid to 1e-6', why === undefined ? {} : { skip: why }, async (t) => {
  const binary = oracle();
  const p = 8, bytes = 65536;
  const dir = mkdtempSync(join(tmpdir(), 'kb-simgrid-a2a-'));
  let simgrid: number;
  try {
    gen(SWITCH(p), bytes, dir);
    const out = execFileSync(binary, [join(dir, 'platform.xml'), join(dir, 'program.txt'), '--cfg=network/model:CM02', '--cfg=network/optim:Full', '--cfg=network/TCP-gamma:0', '--cfg=network/crosstraffic:0', '--cfg=surf/precision:1e-12', '--cfg=maxmin/precision:1e-9', '--log=root.thres:warning'], { encoding: 'utf8' });
    simgrid = Number(out.trim().split('\n').pop());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const [r] = await rt.bench('alltoall_perf', { topology: 'ideal', threads: 1, noData: true, sets: SWITCH(p), options: { 'min-bytes': String(bytes), 'max-bytes': String(bytes) } });
  t.equal(r.algorithm, 'pairwise_all_to_all');
  t.ok(Math.abs(r.critNs - simgrid) / simgrid <= 1e-6, `kernbench ${r.critNs} ns, SimGrid ${simgrid} ns`);
});

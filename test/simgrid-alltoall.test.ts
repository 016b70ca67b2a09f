// The peer-addressing collectives against SimGrid (docs/simgrid.md, "All-to-all",
// "Rabenseifner and the binomial reduce"). The program scripts/simgrid/gen.mjs
// writes for the all-to-all is checked without SimGrid: p (p - 1) blocks, one from
// each rank to each other, over declared routes. Then small cases run in the
// SimGrid oracle (scripts/simgrid/oracle.cpp, C++: skipped only when g++ or
// libsimgrid-dev is absent, as the comparison needs them) and in kernbench, to
// 1e-6: the pairwise all-to-all (alltoall_perf with peer channels) on the ideal
// single switch, and on the fat tree at p = 8 x 1 MiB, the row the oracle's
// detached sends put 1.8 % away (a rank's next send shared its up port with the
// one still streaming; kernbench's join floor keeps them apart, and so does the
// oracle now); the Rabenseifner all-reduce (allreduce_perf) and the binomial
// reduce (scripts/simgrid/reduce_perf.mjs) at p = 8 on the switch and the fat tree.
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
/** The comparison's fat tree: 4 SIPs a leaf, 2 spines, 1:1. */
const FAT_TREE = (p: number): string[] => ['system.sips.topology=fat_tree_2l', `system.sips.count=${p}`, 'system.sips.params.sips_per_leaf=4', 'system.sips.params.spines=2', 'system.sips.params.oversubscription=1', `ccl.peer_ranks=${p}`, 'ccl.n_slots=17'];

/** gen.mjs's program and platform for `algo` (the all-to-all: `bytes` a rank's send buffer). */
function gen(sets: string[], bytes: number, dir: string, algo = 'alltoall'): { program: string[][]; routes: Set<string> } {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // tap's process tracking: not needed by the script
  execFileSync('node', [join(ROOT, 'scripts/simgrid/gen.mjs'), '--topology', 'ideal', ...sets.flatMap((s) => ['--set', s]), '--algo', algo, '--bytes', String(bytes), '--out', dir], { env });
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

/** SimGrid's time in ns for `algo` on the ideal machine with `sets`, through the oracle: sends timed as kernbench does, and detached (its older program). */
function simgrid(binary: string, sets: string[], algo: string, bytes: number): { held: number; detached: number } {
  const dir = mkdtempSync(join(tmpdir(), 'kb-simgrid-a2a-'));
  try {
    gen(sets, bytes, dir, algo);
    const time = (mode: string[]): number => {
      const out = execFileSync(binary, [join(dir, 'platform.xml'), join(dir, 'program.txt'), ...mode, '--cfg=network/model:CM02', '--cfg=network/optim:Full', '--cfg=network/TCP-gamma:0', '--cfg=network/crosstraffic:0', '--cfg=surf/precision:1e-12', '--cfg=maxmin/precision:1e-9', '--log=root.thres:warning'], { encoding: 'utf8' });
      return Number(out.trim().split('\n').pop());
    };
    return { held: time([]), detached: time(['detached']) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** kernbench's crit_ns for `algo`, as compare.mjs runs it (--no-data, one thread). */
async function kernbench(sets: string[], algo: string, bytes: number): Promise<{ critNs: number; algorithm: string }> {
  const size = { 'min-bytes': String(bytes), 'max-bytes': String(bytes) };
  const [r] =
    algo === 'alltoall'
      ? await rt.bench('alltoall_perf', { topology: 'ideal', threads: 1, noData: true, sets, options: size })
      : algo === 'rabenseifner'
        ? await rt.bench('allreduce_perf', { topology: 'ideal', threads: 1, noData: true, sets, algorithm: 'rabenseifner_allreduce', options: size })
        : await rt.bench(join(ROOT, 'scripts/simgrid/reduce_perf.mjs'), { topology: 'ideal', threads: 1, noData: true, sets, options: { bytes: String(bytes) } });
  return { critNs: r.critNs, algorithm: r.algorithm };
}

const close = (got: number, want: number): boolean => Math.abs(got - want) / want <= 1e-6;

const why = missing();
t.test('on the ideal single switch, p = 8 x 64 KiB, the pairwise all-to-all agrees with SimGrid to 1e-6', why === undefined ? {} : { skip: why }, async (t) => {
  const binary = oracle();
  const want = simgrid(binary, SWITCH(8), 'alltoall', 65536).held;
  const r = await kernbench(SWITCH(8), 'alltoall', 65536);
  t.equal(r.algorithm, 'pairwise_all_to_all');
  t.ok(close(r.critNs, want), `kernbench ${r.critNs} ns, SimGrid ${want} ns`);
});

t.test('on the fat tree, p = 8 x 1 MiB, the all-to-all agrees with SimGrid to 1e-6 once the oracle times sends as kernbench does; detached, it did not', why === undefined ? {} : { skip: why }, async (t) => {
  const binary = oracle();
  const sets = FAT_TREE(8);
  const { held: want, detached: old } = simgrid(binary, sets, 'alltoall', 1 << 20);
  const { critNs } = await kernbench(sets, 'alltoall', 1 << 20);
  t.ok(close(critNs, want), `kernbench ${critNs} ns, SimGrid ${want} ns`);
  t.ok(old > critNs * (1 + 1e-3), `detached sends: SimGrid ${old} ns, slower than kernbench's ${critNs} ns`);
});

for (const algo of ['rabenseifner', 'reduce']) {
  t.test(`${algo} at p = 8 x 64 KiB agrees with SimGrid to 1e-6 on the single switch and on the fat tree`, why === undefined ? {} : { skip: why }, async (t) => {
    const binary = oracle();
    for (const [name, sets] of [
      ['single_switch', SWITCH(8)],
      ['fat_tree_2l', FAT_TREE(8)],
    ] as const) {
      const want = simgrid(binary, sets, algo, 65536).held;
      const r = await kernbench(sets, algo, 65536);
      t.equal(r.algorithm, algo === 'reduce' ? 'binomial_reduce' : 'rabenseifner_allreduce');
      t.ok(close(r.critNs, want), `${name}: kernbench ${r.critNs} ns, SimGrid ${want} ns`);
    }
  });
}

// Runs on: main thread (tap). Covers: kernbench as a package (issue 12.1, 12.6,
// 12.7): `npm pack` carries the build and the declarations; in a copy of
// examples/custom-allreduce as a user gets it (test/helpers/packed.ts,
// `exampleProject`: copied out of the repository, the tarball packed into it,
// `npm install`), a user can run the CLI, gets exit 2 with the path for a user
// module that breaks its contract, imports the three entry points from a script
// (withTorch, no CLI) and type-checks against the shipped declarations (the
// project's own TypeScript and the example's algorithm and bench). The
// example's own tests run in a copy of their own (test/package-example.test.ts),
// so that each file stays under its time budget on two cores.
//
// One pack and one install serve every test here (decision 0029): the user's
// files are written into the example's copy, beside its own.
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import t from 'tap';
import { EXAMPLE, ROOT, exampleProject, run, tempDir, type Packed, type Ran } from './helpers/packed.js';

const tmp = tempDir('kernbench-package-');
t.teardown(() => tmp.remove());

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies?: Record<string, string>;
}

// A bench that breaks the contract: no default export made with defineBench.
const BROKEN_BENCH = `export const description = 'a bench without its default export';\n`;

// Spawn targets live in their own module: each rank imports it on its own thread.
const WORKERS = `export async function sumWorker(rank, n, torch) {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([n], { dtype: 'f32' });
  await t.copy_(torch.fromArray(new Float32Array(n).fill(rank + 1)));
  await torch.distributed.allReduce(t, { op: 'sum' });
  return Array.from((await t.numpy()).data);
}
`;

// A script using the library: the three entry points, a session without the CLI.
const SCRIPT = `import { withTorch, DTYPES, ERROR_CODES } from 'kernbench';
import { defineKernel, ringAllReduce } from 'kernbench/kernel';
import { defineBench, z } from 'kernbench/bench';
import { sumWorker } from './workers.mjs';

const run = await withTorch({ topology: 'ideal', threads: 1, sets: ['system.sips.count=3'], modules: [new URL('./workers.mjs', import.meta.url).href] }, (torch) =>
  torch.multiprocessing.spawn(sumWorker, { args: [5], nprocs: 3 }),
);
const entryPoints = [typeof DTYPES, typeof ERROR_CODES, typeof defineKernel, typeof ringAllReduce, typeof defineBench, typeof z.object];
console.log(JSON.stringify({ value: run.value, digest: run.digest, entryPoints }));
`;

// TypeScript against the installed declarations: typed spawn and launch, a typed bench.
const TYPED = `import { withTorch, type Torch } from 'kernbench';
import { defineKernel, type TensorDesc } from 'kernbench/kernel';
import { defineBench, z } from 'kernbench/bench';

export async function worker(rank: number, n: number, torch: Torch): Promise<{ rank: number; n: number }> {
  return { rank: rank + torch.ahbm.currentDevice(), n };
}

export const scale = defineKernel(import.meta.url, 'scale', async (tl, t: TensorDesc, by: number) => {
  void [tl, t, by];
});

export async function main(): Promise<number> {
  const run = await withTorch({ modules: [import.meta.url] }, async (torch) => {
    await torch.launch('scale', scale, torch.zeros([4]), 2);
    // @ts-expect-error launch takes the kernel's arguments: a tensor, then a number
    torch.launch('scale', scale, 2, 2);
    // @ts-expect-error spawn takes the worker's arguments after rank
    await torch.multiprocessing.spawn(worker, { args: ['one'], nprocs: 2 });
    return torch.multiprocessing.spawn(worker, { args: [1], nprocs: 2 });
  });
  const ranks: { rank: number; n: number }[] = run.value;
  return ranks.length;
}

export default defineBench({
  description: 'typed options',
  options: z.object({ nElem: z.number().int().default(8) }),
  async run(torch, ctx) {
    const n: number = ctx.options.nElem;
    // @ts-expect-error options are typed by the schema
    const wrong: string = ctx.options.nElem;
    void wrong;
    return [{ bench: ctx.bench, algorithm: 'none', topology: torch.topologyName, worldSize: 1, nElem: n, dtype: 'f32', ok: true, critNs: 0, lines: [] }];
  },
});
`;

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
// The example's algorithm and bench (its test needs tap's types, which the copy does not install).
const EXAMPLE_SOURCES = ['bidir_ring.ts', 'bench.ts'];
// Only these files are checked (--skipLibCheck: not every declaration of every dependency, a third of the time).
const TSC_FLAGS = ['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules', '@types')];

let project: string;
let packed: Packed;
// Every command below starts as soon as the install is done and runs alongside the others;
// each test awaits its own.
let ran: { cli: Promise<Ran>; broken: Promise<Ran>; script: Promise<Ran>; typed: Promise<Ran>; plot: Promise<Ran> };
/** What the install put in node_modules. */
let installed: { bytes: number; packages: string[] };

/**
 * Bytes of every file under `dir`, each file once as `du` counts it: symbolic links
 * not followed (each counts its own few bytes), and a file with several hard links
 * counted once (esbuild's install links its 10 MB binary into a second package).
 */
function treeBytes(dir: string, seen = new Set<string>()): number {
  let bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      bytes += treeBytes(path, seen);
      continue;
    }
    const st = lstatSync(path);
    const id = `${st.dev}:${st.ino}`;
    if (!seen.has(id)) bytes += st.size;
    seen.add(id);
  }
  return bytes;
}

t.before(async () => {
  ({ project, packed } = await exampleProject(tmp.dir, { 'broken_bench.ts': BROKEN_BENCH, 'workers.mjs': WORKERS, 'script.mjs': SCRIPT, 'typed.ts': TYPED }));
  const modules = join(project, 'node_modules');
  installed = { bytes: treeBytes(modules), packages: readdirSync(modules).filter((n) => !n.startsWith('.')).flatMap((n) => (n.startsWith('@') ? readdirSync(join(modules, n)).map((m) => `${n}/${m}`) : [n])) };
  ran = {
    // --threads 1: the layout is not what is checked here (decision 0160), and every executor loads the library.
    cli: run(project, 'npx', ['kernbench', 'run', '--bench', 'ccl_allreduce', '--json', '--threads', '1']),
    broken: run(project, process.execPath, [join(project, 'node_modules', '.bin', 'kernbench'), 'run', '--bench', './broken_bench.ts']),
    script: run(project, process.execPath, ['script.mjs']),
    typed: run(project, process.execPath, [TSC, ...TSC_FLAGS, 'typed.ts', ...EXAMPLE_SOURCES]),
    plot: run(project, process.execPath, [join(project, 'node_modules', '.bin', 'kernbench'), 'run', '--bench', 'milestone_ccl']),
  };
});

t.test('the tarball holds the build, the declarations, the CLI and the data files, not the tests', async (t) => {
  for (const file of [
    'bin/kernbench.js',
    'dist/bin/cli.js',
    'dist/lib/public/index.js',
    'dist/lib/public/index.d.ts',
    'dist/lib/public/kernel.d.ts',
    'dist/lib/public/bench.d.ts',
    'dist/benches/ccl_allreduce.js',
    'topologies/ccl.yaml',
    'topologies/ideal.yaml',
    'schemas/ccl.schema.json',
    'README.md',
    'LICENSE',
    'examples/custom-allreduce/package.json',
    'examples/custom-allreduce/bidir_ring.ts',
  ]) {
    t.ok(packed.files.includes(file), file);
  }
  t.same(
    packed.files.filter((f) => f.startsWith('dist/test/') || f.startsWith('test/') || f.endsWith('.map') || (f.startsWith('lib/') && f.endsWith('.ts'))),
    [],
    'no tests, source maps or sources',
  );
});

t.test('npx kernbench run --bench ccl_allreduce --threads 1 works in a project that installed the tarball', async (t) => {
  const r = await ran.cli;
  t.equal(r.exitCode, 0, r.stderr);
  const result = JSON.parse(r.stdout) as { ok: boolean; worldSize: number };
  t.same({ ok: result.ok, worldSize: result.worldSize }, { ok: true, worldSize: 2 });
});

t.test('a user bench without a default export exits 2 with its path and no stack', async (t) => {
  const r = await ran.broken;
  t.equal(r.exitCode, 2);
  t.ok(r.stderr.includes(join(project, 'broken_bench.ts')), `names the file: ${r.stderr}`);
  t.notMatch(r.stderr, '    at ', 'no stack trace');
});

t.test('a script imports kernbench, kernbench/kernel and kernbench/bench and runs a session with withTorch', async (t) => {
  const r = await ran.script;
  t.equal(r.exitCode, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { value: number[][]; digest: string; entryPoints: string[] };
  t.same(out.value, [0, 1, 2].map(() => new Array(5).fill(6)), 'each of 3 ranks holds 1 + 2 + 3');
  t.match(out.digest, /^[0-9a-f]{16}$/);
  t.same(out.entryPoints, ['object', 'object', 'function', 'function', 'function', 'function']);
});

t.test('TypeScript in the project and the example\'s algorithm and bench type-check against the shipped declarations', async (t) => {
  const r = await ran.typed;
  t.equal(r.exitCode, 0, r.stdout);
});

t.test('the example depends on the tarball npm pack makes', async (t) => {
  const manifest = JSON.parse(readFileSync(join(EXAMPLE, 'package.json'), 'utf8')) as Manifest;
  t.equal(manifest.dependencies.kernbench, `file:${basename(packed.tarball)}`);
});

// Issue 27 item 2: plotting is an optional peer dependency, so a plain install is light.
const MAX_INSTALL_BYTES = 25_000_000;

t.test('a plain install of the tarball weighs at most 25 MB and has no plotting packages', async (t) => {
  t.ok(installed.bytes <= MAX_INSTALL_BYTES, `node_modules holds ${installed.bytes} bytes in ${installed.packages.length} packages: ${installed.packages.join(', ')}`);
  t.notOk(installed.packages.includes('vega') || installed.packages.includes('vega-lite'), 'vega and vega-lite are not installed');
});

t.test('a bench that plots, without vega installed, exits 2 with one line naming the packages to install, before any run and writing nothing', async (t) => {
  const r = await ran.plot;
  t.equal(r.exitCode, 2, r.stderr);
  t.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
  t.match(r.stderr, 'npm install vega vega-lite');
  t.notOk(existsSync(join(project, 'out')), 'no output folder made');
  t.notOk(existsSync(join(project, 'node_modules', 'kernbench', 'out')), 'nothing written inside the package');
});

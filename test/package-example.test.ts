// Runs on: main thread (tap). Covers: examples/custom-allreduce as a user gets
// it (issue 12.7): copied out of the repository into an empty folder, the
// kernbench tarball packed into it (the dependency its package.json names), and
// `npm install`; there its own tests pass (test/bidir.test.ts: the same digest
// under --threads 1, rank and pe, and the alpha-beta law on the ideal topology).
// Its TypeScript is type-checked against the installed declarations in
// package.test.ts (one tsc run there for both).
//
// Not covered here: installing the example's devDependencies (tap, typescript,
// @types/node) from the registry — that would take most of a minute. They are
// dropped from the copy's package.json and this checkout's own are used: tap
// linked into the copy's node_modules, the test file run with node (tsx loads
// the TypeScript).
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import t from 'tap';
import { ROOT, npmInstall, pack, run, tempDir, type Packed, type Ran } from './helpers/packed.js';

const EXAMPLE = join(ROOT, 'examples', 'custom-allreduce');
const tmp = tempDir('kernbench-example-');
t.teardown(() => tmp.remove());
const project = join(tmp.dir, 'custom-allreduce');

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies?: Record<string, string>;
}

let packed: Packed;
let ran: { tests: Promise<Ran> };

t.before(async () => {
  // What a user copies: the example's own files, none of a local install of it.
  cpSync(EXAMPLE, project, { recursive: true, filter: (src) => !['node_modules', '.tap'].includes(basename(src)) && !src.endsWith('.tgz') });
  packed = await pack(project);
  const manifestFile = join(project, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
  delete manifest.devDependencies;
  writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
  await npmInstall(project);
  symlinkSync(join(ROOT, 'node_modules', 'tap'), join(project, 'node_modules', 'tap'), 'dir');
  ran = {
    tests: run(project, process.execPath, ['--import', 'tsx', join('test', 'bidir.test.ts')]),
  };
});

t.test('the example depends on the tarball npm pack makes', async (t) => {
  const manifest = JSON.parse(readFileSync(join(EXAMPLE, 'package.json'), 'utf8')) as Manifest;
  t.equal(manifest.dependencies.kernbench, `file:${basename(packed.tarball)}`);
});

t.test('the example\'s own tests pass in the copy, with kernbench installed from the tarball', async (t) => {
  const r = await ran.tests;
  t.equal(r.exitCode, 0, r.stderr);
  const topLevel = r.stdout.split('\n').filter((line) => /^(not )?ok \d+ /.test(line));
  t.equal(topLevel.length, 2, 'both of its tests ran');
  t.same(
    topLevel.filter((line) => line.startsWith('not ok')),
    [],
    'none failed',
  );
});

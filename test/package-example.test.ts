// Runs on: main thread (tap). Covers: examples/custom-allreduce as a user gets it
// (issue 12.6) — copied out of the repository into an empty folder, the tarball
// packed into it (the dependency its package.json names), `npm install` — passes
// its own tests there (test/bidir.test.ts: the same digest under --threads 1,
// rank and pe, and the alpha-beta law on the ideal topology). Its own pack and
// install: test/package.test.ts checks the rest of the package from another copy,
// in another tap process.
//
// Not covered here: installing the example's devDependencies (tap, typescript,
// @types/node) from the registry — that would take most of a minute. This
// checkout's tap is linked into the copy's node_modules, and the example's test
// file is run with node (tsx loads the TypeScript).
import { join } from 'node:path';
import t from 'tap';
import { exampleProject, linkTap, run, tempDir } from './helpers/packed.js';

const tmp = tempDir('kernbench-package-example-');
t.teardown(() => tmp.remove());

t.test("the example's own tests pass in the copy, with kernbench installed from the tarball", async (t) => {
  const { project } = await exampleProject(tmp.dir);
  linkTap(project);
  const r = await run(project, process.execPath, ['--import', 'tsx', join('test', 'bidir.test.ts')]);
  t.equal(r.exitCode, 0, r.stderr);
  const topLevel = r.stdout.split('\n').filter((line) => /^(not )?ok \d+ /.test(line));
  t.equal(topLevel.length, 2, 'both of its tests ran');
  t.same(
    topLevel.filter((line) => line.startsWith('not ok')),
    [],
    'none failed',
  );
});

// Runs on: main thread (tap). Covers: `kernbench validate` finds everything
// `kernbench run` would refuse about the configuration, through the CLI's code
// in-process (runCli): each refusal exits 2 with one line naming file:line:col
// (or the --set flag), no stack trace, and `run` prints the very same line before
// any thread starts. Also `list`'s algorithms section, read from the catalog.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { algorithmCatalog } from '../lib/ccl/catalog.js';
import { DEFAULT_CCL_FILE } from '../lib/config/paths.js';
import { cclText, userFolder } from './fixtures/user-algorithms.js';
import { kernbench as run, type Run } from './helpers/cli.js';

// This file runs compiled, from dist/test/: the project root is two levels up.

const user = userFolder();

/** Run `kernbench ...args` in-process from the project root (runCli); never throws on a non-zero exit. */
function kernbench(...args: string[]): Promise<Run> {
  return run(args);
}

/** `file:line:col` of `needle` in `file` (plus `shift` columns), as problems print it. */
function position(file: string, needle: string, shift = 0): string {
  const text = readFileSync(file, 'utf8');
  const i = text.indexOf(needle);
  if (i < 0) throw new Error(`${file} has no '${needle}'`);
  const before = text.slice(0, i).split('\n');
  return `${file}:${before.length}:${before[before.length - 1].length + 1 + shift}`;
}

// Every command is queued at once (they are independent), and the tests await their own.
const brokenCcl = user.write('broken.yaml', cclText('  broken:\n    module: ./broken.ts\n    topology: ring_1d\n'));
const unknownCcl = user.write('unknown.yaml', cclText('  typo:\n    module: ring_alreduce\n    topology: ring_1d\n'));
const shipped = kernbench('validate');
const broken = kernbench('validate', '--ccl', brokenCcl);
const userModules = kernbench('validate', '--ccl', join(user.dir, 'ccl.yaml'), '--algorithm', 'mine');
const list = kernbench('list');
const refusals = [
  { name: 'an unknown module:', flags: ['--ccl', unknownCcl], where: `${position(unknownCcl, 'ring_alreduce')}: algorithms.typo.module: ` },
  { name: 'the shipped ring_allreduce_ws3 (world_size 3) on the 2-SIP default topology', flags: ['--algorithm', 'ring_allreduce_ws3'], where: `${position(DEFAULT_CCL_FILE, 'world_size: 3', 'world_size: '.length)}: algorithms.ring_allreduce_ws3.world_size: ` },
  { name: '--set ccl.world_size=5 on the 2-SIP default topology', flags: ['--set', 'ccl.world_size=5'], where: '--set: ccl.world_size: ' },
  { name: 'mesh_allreduce on a ring topology', flags: ['--algorithm', 'mesh_allreduce', '--topology', 'ring_1d_6'], where: `${position(DEFAULT_CCL_FILE, 'topology: torus_2d', 'topology: '.length)}: algorithms.mesh_allreduce.topology: ` },
].map((c) => ({ ...c, runs: Promise.all([kernbench('validate', ...c.flags), kernbench('run', '--bench', 'ccl_allreduce', ...c.flags)]) }));
t.teardown(async () => {
  await Promise.all([shipped, broken, userModules, list, ...refusals.map((c) => c.runs)]);
  user.remove();
});

t.test('validate accepts the shipped configuration and exits 0', async (t) => {
  const r = await shipped;
  t.same({ exitCode: r.exitCode, stderr: r.stderr }, { exitCode: 0, stderr: '' });
  t.match(r.stdout, /^ok: /);
});

for (const c of refusals) {
  t.test(`validate refuses ${c.name} with exit 2 at its position, and run refuses it with the same line`, async (t) => {
    const [v, r] = await c.runs;
    t.same(
      [v, r].map((x) => ({ exitCode: x.exitCode, code: x.errorCode, stdout: x.stdout, lines: x.stderr.split('\n').length, starts: x.stderr.startsWith(`kernbench: ${c.where}`) })),
      [v, r].map(() => ({ exitCode: 2, code: 'ERR_CONFIG', stdout: '', lines: 2, starts: true })),
      v.stderr,
    );
    t.equal(r.stderr, v.stderr, 'run prints what validate printed');
  });
}

t.test('validate refuses a user module that breaks the contract: exit 2, its path, the exports expected and found', async (t) => {
  const r = await broken;
  t.equal(r.exitCode, 2);
  t.equal(r.errorCode, 'ERR_MODULE_EXPORT');
  t.match(r.stderr, `kernbench: ${position(brokenCcl, './broken.ts')}: algorithms.broken.module: ${join(user.dir, 'broken.ts')} is not a CCL algorithm module`);
  t.match(r.stderr, /Expected exports: meta \(.*\), allReduce \(.*\); found: allreduce, meta\n$/);
  t.notMatch(r.stderr, '    at ', 'no stack trace');
});

t.test('validate accepts a ccl.yaml whose modules are user files (.ts and .mjs) beside it', async (t) => {
  const r = await userModules;
  t.same({ exitCode: r.exitCode, stderr: r.stderr }, { exitCode: 0, stderr: '' });
});

t.test('list shows every shipped algorithm with what it provides and the topologies it accepts', async (t) => {
  const r = await list;
  t.equal(r.exitCode, 0);
  const lines = r.stdout.split('\n');
  const catalog = await algorithmCatalog();
  t.same(
    catalog.map((a) => lines.some((l) => l.trim().split(/\s+/).slice(0, 3).join(' ') === `${a.name} ${a.meta.provides} ${a.meta.topologies.join('|')}`)),
    catalog.map(() => true),
  );
});

// Runs on: main thread (tap). Covers: the kernbench command line's help, list
// and the usage errors of run (unknown bench, unknown flag, bad --threads): exit
// code 2, one message, no stack. The unknown bench runs the real binary through
// execa (the process's exit code 2); the rest run in-process (runCli).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { assertUsageError, assertUsageExit, kernbench, kernbenchProcess, ROOT } from './helpers/cli.js';

t.test('--help exits 0 and lists the run, list and validate commands', async (t) => {
  const r = await kernbench(['--help']);
  t.equal(r.exitCode, 0);
  for (const command of ['run', 'list', 'validate']) t.match(r.stdout, `kernbench ${command}`, command);
});

t.test('list names the ccl_allreduce bench and every shipped topology', async (t) => {
  const r = await kernbench(['list']);
  t.equal(r.exitCode, 0);
  const names = r.stdout.split('\n').map((line) => line.trim().split(/\s+/)[0]);
  t.ok(names.includes('ccl_allreduce'), 'ccl_allreduce is listed');
  const topologies = readdirSync(join(ROOT, 'topologies'))
    .filter((f) => f.endsWith('.yaml') && f !== 'ccl.yaml')
    .map((f) => f.slice(0, -'.yaml'.length));
  t.ok(topologies.length > 0, 'topologies/ ships topologies');
  for (const name of topologies) t.ok(names.includes(name), `${name} is listed`);
  const kinds = readdirSync(join(ROOT, 'lib', 'topology', 'kinds'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -'.ts'.length));
  t.ok(kinds.length > 0, 'lib/topology/kinds ships kinds');
  for (const name of kinds) t.ok(names.includes(name), `topology kind ${name} is listed`);
});

t.test('an unknown bench exits 2 and names the known benches', async (t) => {
  const r = await kernbenchProcess(['run', '--bench', 'nope']);
  assertUsageExit(t, r);
  t.match(r.stderr, 'ccl_allreduce');
  t.match(r.stderr, "'nope'", 'the message ends with what was received');
  t.equal((await kernbench(['run', '--bench', 'nope'])).errorCode, 'ERR_UNKNOWN_BENCH', 'in-process, the same command shows its code');
});

t.test('an unknown flag exits 2 and names the known flags', async (t) => {
  const r = await kernbench(['run', '--bench', 'ccl_allreduce', '--bogus']);
  assertUsageError(t, r, 'ERR_UNKNOWN_FLAG');
  t.match(r.stderr, '--bogus');
  for (const flag of ['--bench', '--topology', '--ccl', '--algorithm', '--threads', '--dtype', '--set', '--json']) t.match(r.stderr, flag, flag);
});

t.test('--threads 0 exits 2', async (t) => {
  assertUsageError(t, await kernbench(['run', '--bench', 'ccl_allreduce', '--threads', '0']), 'ERR_INVALID_THREADS');
});

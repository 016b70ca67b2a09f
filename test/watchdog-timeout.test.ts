// Runs on: main thread (tap). Covers (issue 23 item 3; decision 0095): a kernel
// whose virtual time grows without bound ends at `run --timeout`, named as running;
// `run --max-virtual-time` stops it with ERR_VIRTUAL_TIME_LIMIT; bad values of both
// flags are usage errors. User benches on the public API (test/fixtures/stuck-*.ts). Asserts
// codes and the report's structured fields; no assertion is on wall time (a timeout
// is an input). Split from one file so that each stays within a file's time budget;
// the shared pieces are test/helpers/stopped.ts.
import t from 'tap';
import { kernbench, kernbenchProcess } from './helpers/cli.js';
import { KERNELS, assertKernelRunning, stoppedJson } from './helpers/stopped.js';

t.test('a kernel whose virtual time grows without bound ends at --timeout, named as running', async (t) => {
  const r = await kernbenchProcess(['run', '--bench', KERNELS, '--mode', 'runaway', '--threads', '1', '--timeout', '5', '--json']);
  t.equal(r.exitCode, 1);
  const e = stoppedJson(r.stdout);
  t.equal(e.code, 'ERR_TIMEOUT');
  // Stopped by wall time, the loop of loads can be caught between two of them, waiting for
  // its grant on the cube's memory channel (the coordinator's pass held the arbiter that
  // moment): still the kernel that never ends, not a deadlock. Any other state fails.
  const k = e.actors.find((a) => a.kernel === 'runaway' && a.who.endsWith('kernel'));
  if (k?.state === 'waiting') t.match(k.waitsFor, /^waits for a grant on the memory channel of cube 0 since /, 'between two loads');
  else assertKernelRunning(t, e.actors, 'runaway');
});

t.test('run --max-virtual-time stops the runaway kernel (exit 1, ERR_VIRTUAL_TIME_LIMIT); a bad value is a usage error', async (t) => {
  const r = await kernbench(['run', '--bench', KERNELS, '--mode', 'runaway', '--threads', '1', '--max-virtual-time', '5000', '--json']);
  t.equal(r.exitCode, 1);
  t.equal(stoppedJson(r.stdout).code, 'ERR_VIRTUAL_TIME_LIMIT');
  const bad = await kernbench(['run', '--bench', KERNELS, '--max-virtual-time', 'soon']);
  t.equal(bad.exitCode, 2);
  const badTimeout = await kernbench(['run', '--bench', KERNELS, '--timeout', '-1']);
  t.equal(badTimeout.exitCode, 2);
});

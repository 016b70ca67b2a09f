// Runs on: main thread (tap). Covers (issue 23 item 3; decision 0095): Ctrl-C
// (SIGINT) stops a kernel that keeps its thread busy: exit 1 and the report, naming the
// busy kernel on its PE and the other rank waiting. A user bench on the public API
// (test/fixtures/stuck-kernels.ts). Asserts codes and the report's structured fields;
// no assertion is on wall time. Split from one file so that each stays within a file's
// time budget; the shared pieces are test/helpers/stopped.ts.
import { execa } from 'execa';
import t from 'tap';
import { BIN, ROOT } from './helpers/cli.js';
import { KERNELS, assertKernelRunning, stoppedJson } from './helpers/stopped.js';

t.test('Ctrl-C (SIGINT) stops a kernel that keeps its thread busy: exit 1 and the report', async (t) => {
  const child = execa('node', [BIN, 'run', '--bench', KERNELS, '--mode', 'spin', '--topology', 'ideal', '--json'], { reject: false, cwd: ROOT, timeout: 60_000 });
  // The kernel says it started (its thread is then busy for good): interrupt then.
  await new Promise<void>((resolve) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('spin: started')) resolve();
    });
    void child.then(() => resolve());
  });
  child.kill('SIGINT');
  const r = await child;
  t.equal(r.timedOut, false, 'answers instead of hanging');
  t.equal(r.exitCode, 1);
  const e = stoppedJson(String(r.stdout));
  t.equal(e.code, 'ERR_INTERRUPTED');
  assertKernelRunning(t, e.actors, 'spin');
  t.ok(e.actors.some((a) => a.rank === 1 && a.state === 'waiting'), 'rank 1 is named, waiting');
});

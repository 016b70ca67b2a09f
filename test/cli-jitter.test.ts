// Runs on: main thread (tap). Covers: the determinism contract from the command
// line — scheduling jitter (KERNBENCH_JITTER) and the --threads layout change
// nothing in a run's JSON result.
import { execa } from 'execa';
import t from 'tap';
import { BIN, kernbench, ROOT } from './helpers/cli.js';

t.test('KERNBENCH_JITTER and --threads change nothing in the JSON result', async (t) => {
  const base = await kernbench(['run', '--bench', 'ccl_allreduce', '--json']);
  const variants = await Promise.all([
    execa('node', [BIN, 'run', '--bench', 'ccl_allreduce', '--json', '--threads', 'pe'], { reject: false, cwd: ROOT, env: { KERNBENCH_JITTER: '3' } }),
    execa('node', [BIN, 'run', '--bench', 'ccl_allreduce', '--json', '--threads', '1'], { reject: false, cwd: ROOT, env: { KERNBENCH_JITTER: '8' } }),
  ]);
  t.equal(base.exitCode, 0);
  for (const v of variants) {
    t.equal(v.exitCode, 0);
    t.equal(String(v.stdout).trim(), base.stdout.trim());
  }
});

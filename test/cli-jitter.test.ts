// Runs on: main thread (tap). Covers: the determinism contract from the command
// line — scheduling jitter (KERNBENCH_JITTER) and the --threads layout change
// nothing in a run's JSON result. In-process (runCli, with the variable set in
// the environment the CLI reads, as a shell would set it). The contract itself at
// full size (32 PE threads, every layout, jitter): determinism.test.ts.
import t from 'tap';
import { jitterSeedFromEnv } from '../lib/sync/jitter.js';
import { kernbench } from './helpers/cli.js';

// One cube per SIP (4 PEs each): --threads pe still differs from rank and from 1, with 8 threads instead of 32.
const SMALL = ['--set', 'sip.cube_mesh.w=1', '--set', 'sip.cube_mesh.h=1'];

t.test('KERNBENCH_JITTER and --threads change nothing in the JSON result', async (t) => {
  const args = ['run', '--bench', 'ccl_allreduce', '--json', ...SMALL];
  const base = await kernbench(args);
  const variants = [
    await kernbench([...args, '--threads', 'pe'], { env: { KERNBENCH_JITTER: '3' } }),
    await kernbench([...args, '--threads', '1'], { env: { KERNBENCH_JITTER: '8' } }),
  ];
  t.equal(base.exitCode, 0);
  t.match(JSON.parse(base.stdout), { bench: 'ccl_allreduce', ok: true, digest: /^[0-9a-f]{16}$/ }, 'the result compared is a whole one');
  for (const v of variants) {
    t.equal(v.exitCode, 0);
    t.equal(v.stdout.trim(), base.stdout.trim());
  }
});

t.test('a KERNBENCH_JITTER that is not a non-negative integer is refused with ERR_INVALID_ENV', async (t) => {
  t.equal(jitterSeedFromEnv({ KERNBENCH_JITTER: '7' }), 7);
  t.throws(() => jitterSeedFromEnv({ KERNBENCH_JITTER: 'seven' }), { code: 'ERR_INVALID_ENV' });
  t.throws(() => jitterSeedFromEnv({ KERNBENCH_JITTER: '-1' }), { code: 'ERR_INVALID_ENV' });
});

// Runs on: main thread (tap). Covers: files named on the command line that once
// misbehaved (issue 13.7), each refused before the run with exit 2, one message
// and no stack: an unwritable --trace or --csv (checked before running, not after),
// a binary --topology (no raw control bytes echoed), /dev/zero (size cap) and a
// YAML alias bomb.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { assertUsageError, kernbench } from './helpers/cli.js';

for (const flag of ['--trace', '--csv']) {
  t.test(`${flag} to a path that cannot be written exits 2 before the run`, async (t) => {
    const dir = t.testdir({ 'a-file': 'x' });
    const targets = [join(dir, 'no-such-folder', 'out'), dir, join(dir, 'a-file', 'out')];
    const runs = await Promise.all(targets.map((target) => kernbench(['run', '--bench', 'allreduce_perf', '--max-bytes', '64', flag, target])));
    runs.forEach((r, i) => {
      assertUsageError(t, r, 'ERR_UNWRITABLE_OUTPUT'); // stdout empty: no result was printed, so the run did not happen
      t.match(r.stderr, flag, targets[i]);
    });
  });
}

t.test('--trace to a writable path leaves no file behind when the run is refused later for another reason', async (t) => {
  const file = join(t.testdir(), 'trace.json');
  const r = await kernbench(['run', '--bench', 'ccl_allreduce', '--trace', file, '--topology', 'no-such-topology']);
  t.equal(r.exitCode, 2);
  t.equal(r.errorCode, 'ERR_UNKNOWN_TOPOLOGY');
  t.notOk(existsSync(file), 'the writability check removed the file it created');
});

t.test('a binary file given as --topology exits 2 and prints no raw control bytes', async (t) => {
  const dir = t.testdir();
  const withNul = join(dir, 'nul.bin');
  writeFileSync(withNul, Buffer.from([0x1b, 0x5b, 0x32, 0x4a, 0x07, 0x00, 0x01, 0xff, 0x3a, 0x0d]));
  const noNul = join(dir, 'ctl.bin');
  writeFileSync(noNul, Buffer.from('\x1b[2J\x07: [\x01\x02\x1b]0;title\x07\n', 'latin1'));
  const runs = await Promise.all([withNul, noNul].map((file) => kernbench(['run', '--bench', 'ccl_allreduce', '--topology', file])));
  for (const r of runs) assertUsageError(t, r, 'ERR_CONFIG');
});

t.test('--topology /dev/zero exits 2 instead of reading forever', { skip: existsSync('/dev/zero') ? false : 'no /dev/zero here' }, async (t) => {
  const r = await kernbench(['run', '--bench', 'ccl_allreduce', '--topology', '/dev/zero']);
  assertUsageError(t, r, 'ERR_CONFIG');
  t.match(r.stderr, '/dev/zero');
});

t.test('a YAML alias bomb as --topology exits 2 with a message, not a stack', async (t) => {
  const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 8; i++) {
    const prev = String.fromCharCode(96 + i);
    const name = String.fromCharCode(97 + i);
    levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]`);
  }
  const file = join(t.testdir({ 'bomb.yaml': `${levels.join('\n')}\n` }), 'bomb.yaml');
  const r = await kernbench(['run', '--bench', 'ccl_allreduce', '--topology', file]);
  assertUsageError(t, r, 'ERR_CONFIG');
  t.match(r.stderr, file);
});

// Runs on: main thread (tap). Covers: a shipped bench's flags come from its
// options schema (--help, list, values checked before any thread starts), and
// the flag values that once misbehaved (issue 13.7), each refused up front with
// exit 2, one message and no stack: min > max, a size beyond memory, --threads
// written as -1, 1e3 or 0x2. Files given on the command line: cli-input-files.
import t from 'tap';
import { assertUsageError, kernbench } from './helpers/cli.js';

t.test("run --bench allreduce_perf --help lists the bench's options from its schema, with defaults", async (t) => {
  const r = await kernbench(['run', '--bench', 'allreduce_perf', '--help']);
  t.equal(r.exitCode, 0);
  for (const flag of ['--min-bytes N[K|M|G]', '--max-bytes N[K|M|G]', '--step-factor X', '--op sum|prod|min|max|avg', '--dtype']) t.match(r.stdout, flag, flag);
  t.match(r.stdout, /--dtype \S+ +.*\(default: float\)/, "allreduce_perf's dtype defaults to nccl-tests' float");
});

t.test('list shows each bench with its options', async (t) => {
  const r = await kernbench(['list']);
  t.equal(r.exitCode, 0);
  const block = r.stdout.slice(r.stdout.indexOf('  ccl_allreduce'), r.stdout.indexOf('  gemm_single_pe'));
  t.match(block, /--dtype \S+ +.*\(default: f16\)/, "ccl_allreduce's dtype defaults to f16");
});

t.test('a flag of another bench is an unknown flag for this one', async (t) => {
  const r = await kernbench(['run', '--bench', 'ccl_allreduce', '--min-bytes', '64']);
  assertUsageError(t, r, 'ERR_UNKNOWN_FLAG');
  t.match(r.stderr, "'--min-bytes'");
});

t.test('--min-bytes above --max-bytes exits 2 naming both flags', async (t) => {
  const r = await kernbench(['run', '--bench', 'allreduce_perf', '--min-bytes', '1024', '--max-bytes', '8']);
  assertUsageError(t, r, 'ERR_INVALID_BENCH_OPTION');
  t.match(r.stderr, '--min-bytes');
  t.match(r.stderr, '--max-bytes');
});

t.test('--max-bytes 1e15 is refused before the run with the cap it exceeds', async (t) => {
  const r = await kernbench(['run', '--bench', 'allreduce_perf', '--max-bytes', '1e15']);
  assertUsageError(t, r, 'ERR_INVALID_BENCH_OPTION');
  t.match(r.stderr, '--max-bytes');
  t.match(r.stderr, '1073741824', 'the cap');
});

t.test('a size sweep whose buffers do not fit in device memory is refused before any rank runs, with the figures', async (t) => {
  // 2^29 is under the cap, but with every smaller size also allocated once the two ranks need 2 GiB of a 1 GiB arena.
  const r = await kernbench(['run', '--bench', 'allreduce_perf', '--max-bytes', String(2 ** 29)]);
  assertUsageError(t, r, 'ERR_BENCH_TOO_LARGE');
  t.match(r.stderr, String(2 ** 30), 'the arena it exceeds');
});

t.test('a non-integer or hexadecimal value of an integer option exits 2 naming the flag and the value', async (t) => {
  const values = ['1.5', '0x40', 'abc'];
  const runs = await Promise.all(values.map((value) => kernbench(['run', '--bench', 'allreduce_perf', '--min-bytes', value])));
  runs.forEach((r, i) => {
    assertUsageError(t, r, 'ERR_INVALID_BENCH_OPTION');
    t.match(r.stderr, '--min-bytes', values[i]);
    t.match(r.stderr, `'${values[i]}'`, values[i]);
  });
});

for (const value of ['-1', '1e3', '0x2', '2.0']) {
  t.test(`--threads ${value} exits 2 with kernbench's own message`, async (t) => {
    const r = await kernbench(['run', '--bench', 'ccl_allreduce', '--threads', value]);
    assertUsageError(t, r, 'ERR_INVALID_THREADS');
    t.match(r.stderr, `--threads takes rank, pe or a positive integer`);
    t.match(r.stderr, `'${value}'`);
  });
}

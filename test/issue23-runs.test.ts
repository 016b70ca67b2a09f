// Runs on: main thread (tap). Covers: the smaller breaks of issue 23 (item 6)
// that need a run: one regression test each, through the bench runner or the
// command line, asserting result flags, error codes and exit codes.
import t from 'tap';
import { assertUsageError, kernbench } from './helpers/cli.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

for (const bench of ['tp_mlp', 'gemm_single_pe']) {
  t.test(`${bench} --no-data is ok: results are not checked, as the flag says`, async (t) => {
    const results = await rt.bench(bench, { noData: true });
    t.ok(results.length > 0);
    for (const r of results) t.ok(r.ok, r.lines.join('\n'));
  });
}

t.test('an all-reduce bench given a point-to-point algorithm is a configuration error before any thread starts, and validate --bench says so too', async (t) => {
  const run = await kernbench(['run', '--bench', 'ccl_allreduce', '--algorithm', 'hello_send']);
  assertUsageError(t, run, 'ERR_WRONG_ALGORITHM');
  const validate = await kernbench(['validate', '--bench', 'ccl_allreduce', '--algorithm', 'hello_send']);
  assertUsageError(t, validate, 'ERR_WRONG_ALGORITHM');
  const fine = await kernbench(['validate', '--bench', 'ccl_allreduce', '--algorithm', 'ring_allreduce']);
  t.equal(fine.exitCode, 0, fine.stderr);
});

t.test('hierarchical_perf runs with its own defaults, no --algorithm needed', async (t) => {
  const r = await kernbench(['run', '--bench', 'hierarchical_perf', '--bytes', '64']);
  t.equal(r.exitCode, 0, r.stderr);
});

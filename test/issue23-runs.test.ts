// Runs on: main thread (tap). Covers: the smaller breaks of issue 23 (item 6)
// that need a run: one regression test each, through the bench runner or the
// command line, asserting result flags, error codes and exit codes.
import t from 'tap';
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

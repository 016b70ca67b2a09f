// Runs on: main thread (tap). Covers: what a run writes beside stdout (--trace,
// --csv) and `kernbench sweep` over a grid of --set values.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { VERSION } from '../lib/config/paths.js';
import { assertUsageError, kernbench } from './helpers/cli.js';

t.test('--trace writes a Chrome trace file and the run still exits by itself', async (t) => {
  const file = `${t.testdir()}/trace.json`;
  const r = await kernbench(['run', '--bench', 'ccl_allreduce', '--trace', file]);
  t.equal(r.exitCode, 0);
  const trace = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: { ph: string }[] };
  t.ok(trace.traceEvents.some((e) => e.ph === 'X') && trace.traceEvents.some((e) => e.ph === 's'));
});

t.test("--csv writes a sweep bench's table as CSV with the table's columns", async (t) => {
  const file = `${t.testdir()}/sweep.csv`;
  const r = await kernbench(['run', '--bench', 'allreduce_perf', '--min-bytes', '64', '--max-bytes', '256', '--csv', file]);
  t.equal(r.exitCode, 0);
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  t.equal(lines[0], 'size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBs,oop_busbw_GBs,oop_wrong,ip_time_us,ip_algbw_GBs,ip_busbw_GBs,ip_wrong,kernbench_version', 'the table\'s columns, then the version that wrote them');
  t.ok(lines.slice(1).every((l) => l.endsWith(`,${VERSION}`)), `every row ends with the version, ${VERSION}`);
  t.same(lines.slice(1).map((l) => l.split(',')[0]), ['64', '128', '256']);
});

t.test('sweep runs the bench at every grid point and prints one row per point, --json one object per row', async (t) => {
  const [r, single] = await Promise.all([
    kernbench(['sweep', '--bench', 'ccl_allreduce', '--topology', 'ring_1d_6', '--over', 'ccl.world_size=2,3', '--over', 'ccl.n_elem=8,64', '--json']),
    kernbench(['run', '--bench', 'ccl_allreduce', '--topology', 'ring_1d_6', '--set', 'ccl.world_size=3', '--set', 'ccl.n_elem=64', '--json']),
  ]);
  t.equal(r.exitCode, 0);
  const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  t.same(rows.map((x) => [x['ccl.world_size'], x['ccl.n_elem'], x.worldSize, x.nElem, x.ok]), [
    ['2', '8', 2, 8, true],
    ['2', '64', 2, 64, true],
    ['3', '8', 3, 8, true],
    ['3', '64', 3, 64, true],
  ]);
  const one = JSON.parse(single.stdout) as { digest: string; critNs: number };
  t.same([rows[3].digest, rows[3].critNs], [one.digest, one.critNs], 'a sweep point equals the same single run');
});

t.test('sweep without --over, or with a malformed one, exits 2', async (t) => {
  assertUsageError(t, await kernbench(['sweep', '--bench', 'ccl_allreduce']), 'ERR_MISSING_ARGUMENT');
  assertUsageError(t, await kernbench(['sweep', '--bench', 'ccl_allreduce', '--over', 'ccl.n_elem']), 'ERR_INVALID_SWEEP');
});

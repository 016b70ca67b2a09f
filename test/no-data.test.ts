// Timing-only mode (issue 4, item 11): --no-data skips data movement and
// arithmetic but keeps every virtual time, so large sweeps can run fast.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

const timesOf = (lines: string[]): string[] => lines.filter((l) => /^\s+\d/.test(l)).map((l) => [...l.trim().split(/\s+/).slice(0, 8), ...l.trim().split(/\s+/).slice(9, 12)].join(' '));

t.test('ccl_allreduce: same crit_ns with and without data, on several topologies and sizes', async (t) => {
  for (const over of [{}, { topology: 'ring_1d_6' }, { topology: 'ring_1d_6', sets: ['ccl.world_size=5', 'ccl.n_elem=3001', 'ccl.n_slots=2'] }]) {
    const [full] = await rt.bench('ccl_allreduce', over);
    const [timing] = await rt.bench('ccl_allreduce', { ...over, noData: true });
    t.ok(full.ok && timing.ok);
    t.equal(timing.critNs, full.critNs, JSON.stringify(over));
    t.not(timing.digest, full.digest, 'the outputs differ (no data moved), so the digests do');
  }
});

t.test('allreduce_perf: every row has the same time and bandwidths with and without data', async (t) => {
  const over = { topology: 'ring_1d_6', sets: ['ccl.world_size=3'], options: { 'max-bytes': '16384' } };
  const [full] = await rt.bench('allreduce_perf', over);
  const [timing] = await rt.bench('allreduce_perf', { ...over, noData: true });
  t.same(timesOf(timing.lines), timesOf(full.lines));
});

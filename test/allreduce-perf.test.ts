// allreduce_perf (issue 4, item 8): an nccl-tests style table whose columns
// follow from the virtual times: algbw = size / time, busbw = algbw * 2(n-1)/n.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

t.test('the table has one row per size, no wrong values, and busbw = algbw * 2(n-1)/n', async (t) => {
  const [r] = await rt.bench('allreduce_perf', { topology: 'ring_1d_6', sets: ['ccl.world_size=3'], options: { 'min-bytes': '64', 'max-bytes': '4096', 'step-factor': '4' } });
  t.ok(r.ok);
  const rows = r.lines.filter((l) => /^\s+\d/.test(l)).map((l) => l.trim().split(/\s+/));
  t.same(rows.map((c) => Number(c[0])), [64, 256, 1024, 4096], 'sizes from min to max by the factor');
  for (const [bytes, count, type, op, us, algbw, busbw, wrong] of rows) {
    t.equal(Number(count), Number(bytes) / 4);
    t.same([type, op, wrong], ['f32', 'sum', '0']);
    t.ok(Math.abs(Number(algbw) - Number(bytes) / (Number(us) * 1000)) < 2e-3, `algbw of ${bytes}`);
    t.ok(Math.abs(Number(busbw) - (Number(algbw) * 2 * 2) / 3) < 2e-3, `busbw of ${bytes}`);
  }
  t.match(r.lines[r.lines.length - 1], /^# Avg bus bandwidth\s+: [0-9.]+ GB\/s$/);
});

t.test('every reduction op gives exact results in f16', async (t) => {
  for (const op of ['sum', 'prod', 'min', 'max', 'avg']) {
    const [r] = await rt.bench('allreduce_perf', { topology: 'ring_1d_6', dtype: 'f16', threads: 1, sets: ['ccl.world_size=5'], options: { 'min-bytes': '32', 'max-bytes': '512', op } });
    t.ok(r.ok, `${op}: ${r.lines.slice(-2).join(' ')}`);
  }
});

t.test('allreduce_perf gives the same digest under --threads 1, rank, pe and under jitter', async (t) => {
  const over = { topology: 'ring_1d_6', sets: ['ccl.world_size=3'], options: { 'min-bytes': '64', 'max-bytes': '1024', 'step-factor': '4' } };
  const runs = [];
  for (const v of [{ threads: 1 }, { threads: 'rank' as const }, { threads: 'pe' as const }, { threads: 'rank' as const, jitterSeed: 6 }]) {
    const [r] = await rt.bench('allreduce_perf', { ...over, ...v });
    runs.push({ digest: r.digest, lines: r.lines });
  }
  for (const r of runs.slice(1)) t.same(r, runs[0]);
});

// The determinism contract (DESIGN §4): the same program, topology and
// configuration give bit-identical output — data and every PE's virtual times
// — under every thread layout and under injected scheduling jitter. The
// single-executor run is the reference; every other run is compared to it.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

const cases = [
  { name: 'default topology, 2 ranks, f16', over: {} },
  { name: '3 ranks (odd) on a 6-SIP ring, f32, n not divisible by ws', over: { topology: 'ring_1d_6', dtype: 'f32' as const, sets: ['ccl.world_size=3', 'ccl.n_elem=1001'] } },
  { name: '5 ranks, bf16, small pieces', over: { topology: 'ring_1d_6', dtype: 'bf16' as const, sets: ['ccl.world_size=5', 'ccl.n_elem=700', 'ccl.vc_chunk_size=64'] } },
];

for (const c of cases) {
  t.test(`${c.name}: same digest and crit_ns under --threads 1, rank, pe, 2 and under jitter`, async (t) => {
    const ref = (await rt.bench('ccl_allreduce', { ...c.over, threads: 1 }))[0];
    t.ok(ref.ok, `the reference run is correct: ${ref.lines.join(' | ')}`);
    t.ok(ref.critNs > 0, 'the reference run takes virtual time');
    const variants = [
      { threads: 'rank' as const, jitterSeed: null },
      { threads: 'pe' as const, jitterSeed: null },
      { threads: 2, jitterSeed: null },
      { threads: 'rank' as const, jitterSeed: 1 },
      { threads: 'pe' as const, jitterSeed: 7 },
      { threads: 1, jitterSeed: 42 },
    ];
    const seen = [];
    for (const v of variants) {
      const r = (await rt.bench('ccl_allreduce', { ...c.over, ...v }))[0];
      seen.push({ layout: `${v.threads}/jitter ${v.jitterSeed}`, digest: r.digest, critNs: r.critNs, ok: r.ok });
    }
    t.same(
      seen,
      variants.map((v) => ({ layout: `${v.threads}/jitter ${v.jitterSeed}`, digest: ref.digest, critNs: ref.critNs, ok: true })),
    );
  });
}

t.test('two runs in a row reuse the threads and agree', async (t) => {
  const a = (await rt.bench('ccl_allreduce', { threads: 'rank' }))[0];
  const b = (await rt.bench('ccl_allreduce', { threads: 'rank' }))[0];
  t.equal(a.digest, b.digest);
});

t.test('the digest changes when the program changes (it is not a constant)', async (t) => {
  const a = (await rt.bench('ccl_allreduce', { threads: 1 }))[0];
  const b = (await rt.bench('ccl_allreduce', { threads: 1, sets: ['ccl.n_elem=1000'] }))[0];
  const c = (await rt.bench('ccl_allreduce', { threads: 1, sets: ['timing.links.sip_sip.latency_ns=123'] }))[0];
  t.not(a.digest, b.digest, 'different data');
  t.not(a.digest, c.digest, 'different timing');
  t.not(a.critNs, c.critNs);
});

t.test('a send the kernel never awaits still ends the kernel at the same time on the fast and the queued path', async (t) => {
  const { fireAndForgetWorker } = await import('./fixtures/kernels.js');
  const runs = [];
  for (const over of [{ threads: 1 }, { threads: 'rank' as const }, { threads: 1, jitterSeed: 5 }, { threads: 'pe' as const, jitterSeed: 2 }]) {
    const r = await rt.session({ topology: 'ring_1d_6', ...over }, (torch) => torch.multiprocessing.spawn(fireAndForgetWorker, { nprocs: 2 }));
    runs.push({ value: r.value, digest: r.digest });
  }
  for (const r of runs.slice(1)) t.same(r, runs[0]);
});

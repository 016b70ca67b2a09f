// The transformer_layer bench is deterministic: the same digests and crit_ns
// under --threads 1, rank, pe and under jitter (DESIGN.md section 4). Apart
// from test/tp-layer.test.ts so that each file stays well under 30 s.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

t.test('transformer_layer gives the same digests and crit_ns under --threads 1, rank, pe and under jitter', async (t) => {
  const sets = ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1']; // one PE per rank computes: 8 threads under --threads pe, not 32
  const options = { preset: 'tiny-gqa', variant: 'tp+sp' }; // the variant with the most collectives
  const key = (rs: { algorithm: string; digest: string; critNs: number }[]) => rs.map((r) => `${r.algorithm} ${r.digest} ${r.critNs}`);
  const ref = key(await rt.bench('transformer_layer', { threads: 1, sets, options }));
  for (const v of [{ threads: 'rank' as const, jitterSeed: null }, { threads: 'pe' as const, jitterSeed: null }, { threads: 1 as const, jitterSeed: 7 }]) {
    t.same(key(await rt.bench('transformer_layer', { ...v, sets, options })), ref, `${v.threads}/${v.jitterSeed}`);
  }
});

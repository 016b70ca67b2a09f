// The overlapped transformer layer (its fused collective-matmul kernels) is
// deterministic: the same digests, crit_ns and exposed communication under
// --threads 1, rank, pe and under jitter (DESIGN.md section 4). Apart from
// test/tp-overlap.test.ts so that each file stays well under 30 s.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

t.test('the overlapped transformer_layer gives the same digests, crit_ns and exposed communication under --threads 1, rank, pe and under jitter', async (t) => {
  const sets = ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1']; // one PE per rank computes
  const options = { preset: 'tiny', variant: 'tp+sp+overlap' };
  const key = (rs: { algorithm: string; digest: string; critNs: number; extra?: Record<string, unknown> }[]) => rs.map((r) => `${r.algorithm} ${r.digest} ${r.critNs} ${String(r.extra?.exposed_comm_ns)}`);
  const ref = key(await rt.bench('transformer_layer', { threads: 1, sets, options }));
  t.match(ref[0], /^tp\+sp\+overlap [0-9a-f]{16} [0-9.]+ [0-9.]+$/);
  for (const v of [{ threads: 'rank' as const, jitterSeed: null }, { threads: 'pe' as const, jitterSeed: null }, { threads: 1 as const, jitterSeed: 11 }]) {
    t.same(key(await rt.bench('transformer_layer', { ...v, sets, options })), ref, `${v.threads}/${v.jitterSeed}`);
  }
});

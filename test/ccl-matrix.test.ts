// The all-reduce correctness matrix (through the ccl_allreduce bench: spawn ->
// initProcessGroup -> allReduce(sum), every element checked on every rank):
// every all-reduce algorithm of the catalog x each variant of its params x the
// ccl.yaml topologies it accepts x topology files and world sizes (2 and odd
// ones where the topology allows) x buffer kind x dtype, under --threads 1.
// Rank r holds r + 1, so f16 sums are exact. The points are test/helpers/ccl-matrix.ts's;
// this file runs those on ring_1d_6 and the buffer kinds' order, and
// test/ccl-matrix-2d.test.ts those on the 2-D files, in another group. A few points
// also run under --threads rank / pe and jitter and must match the reference
// digest: test/ccl-matrix-layouts.test.ts. Multi-PE tensors (where hierarchical
// differs) are in ccl-hierarchical.test.ts.
import t from 'tap';
import { BUFFERS, points, testPoint, variants } from './helpers/ccl-matrix.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

for (const p of points.filter((p) => p.topology === 'ring_1d_6')) testPoint(t, rt, p);

t.test('every all-reduce variant on torus_2d_2x3 is slower with staging slots in sram than tcm, and in hbm than sram', async (t) => {
  const seen: Record<string, boolean> = {};
  for (const v of variants) {
    const crit: number[] = [];
    for (const buffer of BUFFERS) {
      const [r] = await rt.bench('ccl_allreduce', { topology: 'torus_2d_2x3', threads: 1, dtype: 'f16', sets: [...v.sets, 'ccl.n_elem=4096', `ccl.buffer_kind=${buffer}`] });
      crit.push(r.critNs);
    }
    seen[v.label] = crit[0] < crit[1] && crit[1] < crit[2];
    t.comment(`${v.label}: tcm ${crit[0]} ns, sram ${crit[1]} ns, hbm ${crit[2]} ns`);
  }
  t.same(seen, Object.fromEntries(variants.map((v) => [v.label, true])));
});

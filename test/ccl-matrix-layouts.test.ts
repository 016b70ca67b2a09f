// Runs on: main thread (tap). Covers: a few points of the all-reduce correctness
// matrix (test/ccl-matrix.test.ts and ccl-matrix-2d.test.ts: every algorithm x params x
// topology x world size x buffer kind x dtype under --threads 1) also run under
// --threads rank and pe and under jitter, and give the --threads 1 digest and crit_ns. Split from the matrix's
// file so that each of the two groups stays within its time budget.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

/** As in the matrix: not divisible by 2, 3, 5 or 6, chunks of unequal length everywhere. */
const N_ELEM = 1001;

const LAYOUTS = [
  { threads: 'rank' as const, jitterSeed: null },
  { threads: 'pe' as const, jitterSeed: null },
  { threads: 'rank' as const, jitterSeed: 11 },
];
// Spot checks name ccl.yaml entries: the shipped configuration is what users run.
const spotChecks = [
  { algorithm: 'ring_allreduce', topology: 'ring_1d_6', ws: 5 },
  { algorithm: 'mesh_allreduce', topology: 'torus_2d_3x2', ws: 6 },
  { algorithm: 'mesh_allreduce_no_wrap', topology: 'mesh_2d_2x3', ws: 6 },
  { algorithm: 'tree_allreduce', topology: 'ring_1d_6', ws: 5 },
  { algorithm: 'hierarchical_allreduce_center', topology: 'torus_2d_2x3', ws: 6 },
];
for (const p of spotChecks) {
  t.test(`${p.algorithm} on ${p.topology} with ${p.ws} ranks: --threads rank, pe and jitter give the --threads 1 digest and crit_ns`, async (t) => {
    const over = { algorithm: p.algorithm, topology: p.topology, dtype: 'f16' as const, sets: [`ccl.world_size=${p.ws}`, `ccl.n_elem=${N_ELEM}`, 'ccl.buffer_kind=sram'] };
    const [ref] = await rt.bench('ccl_allreduce', { ...over, threads: 1 });
    t.ok(ref.ok, ref.lines.join(' | '));
    const seen = [];
    for (const v of LAYOUTS) {
      const [r] = await rt.bench('ccl_allreduce', { ...over, ...v });
      seen.push({ layout: `${v.threads}/${v.jitterSeed}`, digest: r.digest, critNs: r.critNs });
    }
    t.same(
      seen,
      LAYOUTS.map((v) => ({ layout: `${v.threads}/${v.jitterSeed}`, digest: ref.digest, critNs: ref.critNs })),
    );
  });
}

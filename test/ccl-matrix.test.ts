// The all-reduce correctness matrix (through the ccl_allreduce bench: spawn ->
// initProcessGroup -> allReduce(sum), every element checked on every rank):
// every all-reduce algorithm x the topologies it runs on x world sizes
// (2 and odd ones where the topology allows) x buffer kind x dtype, under
// --threads 1. Rank r holds r + 1, so f16 sums are exact. A few points also
// run under --threads rank / pe and jitter and must match the reference digest.
// Multi-PE tensors (where hierarchical differs) are in ccl-hierarchical.test.ts.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

const BUFFERS = ['tcm', 'sram', 'hbm'] as const;
const DTYPES = ['f16', 'f32'] as const;
/** Not divisible by 2, 3, 5 or 6: chunks of unequal length everywhere. */
const N_ELEM = 1001;

const RING_LIKE = ['ring_allreduce', 'tree_allreduce', 'hierarchical_allreduce', 'hierarchical_allreduce_center'];
const GRID = ['mesh_allreduce', 'mesh_allreduce_no_wrap'];
const TOPOLOGIES_2D = ['torus_2d_2x3', 'torus_2d_3x2', 'mesh_2d_2x3'];

const points: { algorithm: string; topology: string; ws: number }[] = [];
for (const algorithm of RING_LIKE) {
  for (const ws of [2, 3, 5, 6]) points.push({ algorithm, topology: 'ring_1d_6', ws });
  for (const topology of TOPOLOGIES_2D) points.push({ algorithm, topology, ws: 6 });
}
for (const algorithm of GRID) for (const topology of TOPOLOGIES_2D) points.push({ algorithm, topology, ws: 6 });

for (const p of points) {
  t.test(`${p.algorithm} on ${p.topology} with ${p.ws} ranks: every rank holds the exact sum for every buffer kind and dtype`, async (t) => {
    const seen = [];
    for (const buffer of BUFFERS) {
      for (const dtype of DTYPES) {
        const [r] = await rt.bench('ccl_allreduce', { algorithm: p.algorithm, topology: p.topology, threads: 1, dtype, sets: [`ccl.world_size=${p.ws}`, `ccl.n_elem=${N_ELEM}`, `ccl.buffer_kind=${buffer}`] });
        seen.push({ buffer, dtype, ok: r.ok, worldSize: r.worldSize, lines: r.ok ? [] : r.lines });
      }
    }
    t.same(
      seen,
      BUFFERS.flatMap((buffer) => DTYPES.map((dtype) => ({ buffer, dtype, ok: true, worldSize: p.ws, lines: [] }))),
    );
  });
}

const LAYOUTS = [
  { threads: 'rank' as const, jitterSeed: null },
  { threads: 'pe' as const, jitterSeed: null },
  { threads: 'rank' as const, jitterSeed: 11 },
];
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

const ALL = [...RING_LIKE, ...GRID];
t.test('every all-reduce algorithm on torus_2d_2x3 is slower with staging slots in sram than tcm, and in hbm than sram', async (t) => {
  const seen: Record<string, boolean> = {};
  for (const algorithm of ALL) {
    const crit: number[] = [];
    for (const buffer of BUFFERS) {
      const [r] = await rt.bench('ccl_allreduce', { algorithm, topology: 'torus_2d_2x3', threads: 1, dtype: 'f16', sets: ['ccl.n_elem=4096', `ccl.buffer_kind=${buffer}`] });
      crit.push(r.critNs);
    }
    seen[algorithm] = crit[0] < crit[1] && crit[1] < crit[2];
    t.comment(`${algorithm}: tcm ${crit[0]} ns, sram ${crit[1]} ns, hbm ${crit[2]} ns`);
  }
  t.same(seen, Object.fromEntries(ALL.map((a) => [a, true])));
});

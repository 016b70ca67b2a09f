// The all-reduce correctness matrix (through the ccl_allreduce bench: spawn ->
// initProcessGroup -> allReduce(sum), every element checked on every rank):
// every all-reduce algorithm of the catalog x each variant of its params x the
// ccl.yaml topologies it accepts x topology files and world sizes (2 and odd
// ones where the topology allows) x buffer kind x dtype, under --threads 1.
// Rank r holds r + 1, so f16 sums are exact. A few points also run under
// --threads rank / pe and jitter and must match the reference digest: those are
// test/ccl-matrix-layouts.test.ts, in another group (this one is long enough).
// Multi-PE tensors (where hierarchical differs) are in ccl-hierarchical.test.ts.
//
// Algorithms come from the catalog (lib/ccl/catalog.ts), never from a list
// here: an algorithm added to lib/ccl/algorithms/ is in the matrix at once.
// A point picks its algorithm with --set ccl.module/topology/params.
import t from 'tap';
import { z } from 'zod';
import { algorithmCatalog } from '../lib/ccl/catalog.js';
import type { AlgorithmMeta } from '../lib/ccl/define-algorithm.js';
import type { SipTopologyKind } from '../lib/config/topology-schema.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

const BUFFERS = ['tcm', 'sram', 'hbm'] as const;
const DTYPES = ['f16', 'f32'] as const;
/** Not divisible by 2, 3, 5 or 6: chunks of unequal length everywhere. */
const N_ELEM = 1001;

const TOPOLOGIES_2D = ['torus_2d_2x3', 'torus_2d_3x2', 'mesh_2d_2x3'];

/** Every combination of the enum-valued params of `meta` ({} for none): the variants of the algorithm. */
function paramVariants(meta: AlgorithmMeta): Record<string, string>[] {
  const shape = (meta.params?.shape ?? {}) as Record<string, z.ZodType>;
  let variants: Record<string, string>[] = [{}];
  for (const [key, schema] of Object.entries(shape)) {
    const inner = schema instanceof z.ZodDefault ? (schema.unwrap() as z.ZodType) : schema;
    if (!(inner instanceof z.ZodEnum)) continue; // free-form params keep their default
    variants = variants.flatMap((v) => (inner.options as string[]).map((o) => ({ ...v, [key]: o })));
  }
  return variants;
}

/** One algorithm configuration: a catalog module on a ccl.yaml topology with params, as --set overrides. */
interface Variant {
  label: string;
  sets: string[];
}

function variant(module: string, kind: SipTopologyKind, params: Record<string, string>): Variant {
  const p = Object.entries(params);
  return {
    label: `${module}${p.map(([k, v]) => ` ${k}=${v}`).join('')} (${kind})`,
    sets: [`ccl.module=${module}`, `ccl.topology=${kind}`, ...p.map(([k, v]) => `ccl.params.${k}=${v}`)],
  };
}

const catalog = (await algorithmCatalog()).filter((a) => a.meta.provides === 'all_reduce');
const variants: (Variant & { kind: SipTopologyKind })[] = catalog.flatMap((a) =>
  a.meta.topologies.flatMap((kind) => paramVariants(a.meta).map((params) => ({ ...variant(a.name, kind, params), kind }))),
);

const points: (Variant & { topology: string; ws: number })[] = [];
for (const v of variants) {
  // A ring_1d arrangement runs on any topology file (2 and odd world sizes on a ring of 6); a 2-D one on the 2-D files.
  if (v.kind === 'ring_1d') for (const ws of [2, 3, 5, 6]) points.push({ ...v, topology: 'ring_1d_6', ws });
  for (const topology of TOPOLOGIES_2D) points.push({ ...v, topology, ws: 6 });
}

for (const p of points) {
  t.test(`${p.label} on ${p.topology} with ${p.ws} ranks: every rank holds the exact sum for every buffer kind and dtype`, async (t) => {
    const seen = [];
    for (const buffer of BUFFERS) {
      for (const dtype of DTYPES) {
        const [r] = await rt.bench('ccl_allreduce', { topology: p.topology, threads: 1, dtype, sets: [...p.sets, `ccl.world_size=${p.ws}`, `ccl.n_elem=${N_ELEM}`, `ccl.buffer_kind=${buffer}`] });
        seen.push({ buffer, dtype, ok: r.ok, worldSize: r.worldSize, lines: r.ok ? [] : r.lines });
      }
    }
    t.same(
      seen,
      BUFFERS.flatMap((buffer) => DTYPES.map((dtype) => ({ buffer, dtype, ok: true, worldSize: p.ws, lines: [] }))),
    );
  });
}

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

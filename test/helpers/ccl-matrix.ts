// Runs on: main thread (tap). The all-reduce correctness matrix's points, shared by
// its two files (test/ccl-matrix.test.ts: the ring_1d_6 points and the buffer order;
// test/ccl-matrix-2d.test.ts: the 2-D topology files), which run in two tap
// processes so that each stays within a file's time budget.
//
// Algorithms come from the catalog (lib/ccl/catalog.ts), never from a list
// here: an algorithm added to lib/ccl/algorithms/ is in the matrix at once.
// A point picks its algorithm with --set ccl.module/topology/params.
import type { Test } from 'tap';
import { z } from 'zod';
import { algorithmCatalog } from '../../lib/ccl/catalog.js';
import type { AlgorithmMeta } from '../../lib/ccl/define-algorithm.js';
import type { SipTopologyKind } from '../../lib/config/topology-schema.js';
import type { TestRuntime } from './run.js';

export const BUFFERS = ['tcm', 'sram', 'hbm'] as const;
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
export interface Variant {
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
export const variants: (Variant & { kind: SipTopologyKind })[] = catalog.flatMap((a) =>
  a.meta.topologies.flatMap((kind) => paramVariants(a.meta).map((params) => ({ ...variant(a.name, kind, params), kind }))),
);

export interface Point extends Variant {
  topology: string;
  ws: number;
}

/** Every point: a ring_1d arrangement runs on any topology file (2 and odd world sizes on a ring of 6); a 2-D one on the 2-D files. */
export const points: Point[] = variants.flatMap((v) => [
  ...(v.kind === 'ring_1d' ? [2, 3, 5, 6].map((ws) => ({ ...v, topology: 'ring_1d_6', ws })) : []),
  ...TOPOLOGIES_2D.map((topology) => ({ ...v, topology, ws: 6 })),
]);

/** One test a point: the ccl_allreduce bench under --threads 1 for every buffer kind and dtype, every rank's sum checked. */
export function testPoint(t: Test, rt: TestRuntime, p: Point): void {
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

// Runs on: any thread. Owns: what an algorithm module says about itself — the
// `meta` it exports next to its kernel — and defineAlgorithm, which checks
// and freezes it. The catalog (lib/ccl/catalog.ts), the ccl.yaml checks
// (lib/ccl/resolve.ts), `kernbench list` and the test matrix read only this.
//
// An algorithm module (shipped in lib/ccl/algorithms/, or a user's file named
// by a ccl.yaml `module:` path) exports:
//   meta       = defineAlgorithm({ provides, arrangement, topologies, summary, params?, peers?, splits?, sends? })
//   and the kernel of what it provides (KERNEL_EXPORTS), made with defineKernel:
//   allReduce  (tl, t, op, shape, params)                          all_reduce
//   allToAll   (tl, out, input, inSplits, outSplits, params)       all_to_all
//   reduce     (tl, t, op, dst, params)                            reduce (dst: the root's group rank)
//   gather     (tl, outs, input, dst, params)                      gather (outs: the root's p blocks, or one tensor of p blocks; [] elsewhere)
//   scatter    (tl, out, ins, src, params)                         scatter (ins: the root's p blocks, or one tensor; [] elsewhere)
// (docs/algorithms/partners.md; docs/decisions/0105-collective-modules.md)
// `params` is a zod object schema for the entry's `params:` mapping; the kernel
// receives the parsed value ({} when the module declares none). A variant of
// an algorithm (another root, another chunking) is a parameter, not a module.
//
// The meta schema is built and run on the main thread only (../zod-on-main.ts):
// main loads every algorithm module a run uses, through the catalog, before any
// other thread starts, and refuses a bad one there. The coordinator and the
// executors import the same modules and take their meta as main checked it, so
// they load no zod (decision 0228).
import type { z } from 'zod';
import { KernbenchError } from '../errors.js';
import { zodOnMain } from '../zod-on-main.js';
import { DIRECTIONS, type Direction } from '../shm/layout.js';
import { SIP_TOPOLOGIES } from '../topology/kind-registry.js';
import type { SipTopologyKind } from '../topology/define-kind.js';

/** What a module provides: a collective's kernel, or a point-to-point smoke test with its own kernels. */
export const PROVIDES = ['all_reduce', 'all_to_all', 'reduce', 'gather', 'scatter', 'point_to_point'] as const;

/** The collectives other than all_reduce that ccl.yaml's `collectives:` picks a module for. */
export const COLLECTIVES = ['all_to_all', 'reduce', 'gather', 'scatter'] as const;

/** The name of the kernel export each kind of module must have (point_to_point: none). */
export const KERNEL_EXPORTS = { all_reduce: 'allReduce', all_to_all: 'allToAll', reduce: 'reduce', gather: 'gather', scatter: 'scatter' } as const;

/** What an all_to_all module takes: equal blocks only, or any split sizes. */
export const SPLITS = ['even', 'uneven'] as const;

/**
 * How the module's ranks are arranged into a world (lib/ccl/placement.ts):
 *   logical       the ranks arranged as the entry's `topology` kind (lib/topology/kinds/):
 *                 a 1-D kind (ring_1d, line_1d) -> a row of the ranks,
 *                 a 2-D kind (torus_2d, mesh_2d_no_wrap) -> the topology file's SIP grid
 *   tree          a binary tree of the ranks in rank order
 *   hierarchical  every shard PE of every rank, wired per SIP (lib/ccl/hierarchy.ts);
 *                 each SIP's tree is rooted at the entry's `root` param (corner | center, default corner)
 */
export const ARRANGEMENTS = ['logical', 'tree', 'hierarchical'] as const;

export type Provides = (typeof PROVIDES)[number];
export type CollectiveName = (typeof COLLECTIVES)[number];
export type ArrangementKind = (typeof ARRANGEMENTS)[number];

/** A zod object schema, recognised by shape so that a user's own copy of zod works too. */
export type ParamsSchema = z.ZodObject;

function isParamsSchema(v: unknown): v is ParamsSchema {
  const s = v as { safeParse?: unknown; shape?: unknown } | null;
  return typeof s === 'object' && s !== null && typeof s.safeParse === 'function' && typeof s.shape === 'object' && s.shape !== null;
}

function metaSchema(z: NonNullable<typeof zodOnMain>) {
  return z.strictObject({
    provides: z.enum(PROVIDES),
    arrangement: z.enum(ARRANGEMENTS),
    /** The ccl.yaml `topology` values the module accepts: SIP topology kinds (lib/topology/kinds/). */
    topologies: z.array(z.enum(SIP_TOPOLOGIES)).min(1),
    /** One line for `kernbench list` and errors. */
    summary: z
      .string()
      .min(1)
      .refine((s) => !s.includes('\n'), { message: 'expected one line' }),
    /** Schema of the entry's `params:` mapping. */
    params: z.custom<ParamsSchema>(isParamsSchema, { message: 'expected a zod object schema (z.object({...}))' }).optional(),
    /** Its kernels address ranks by tl.peer: a group needs peer channels (ccl.peer_ranks >= its size). Default false. */
    peers: z.boolean().optional(),
    /** all_to_all only: the split sizes it takes (default even: p equal blocks). */
    splits: z.enum(SPLITS).optional(),
    /** The directions its kernels send on (default: any); a send elsewhere is refused (decision 0188). Declared at the launch of every kind but point_to_point. */
    sends: z.array(z.enum(DIRECTIONS)).min(1).optional(),
  }).refine((m) => m.splits === undefined || m.provides === 'all_to_all', { path: ['splits'], message: 'only an all_to_all module says which splits it takes' });
}

/** The schema of `meta` on the main thread; undefined on the others. */
const AlgorithmMetaSchema = zodOnMain === undefined ? undefined : metaSchema(zodOnMain);

/** The metadata an algorithm module exports as `meta`. */
export interface AlgorithmMeta<P extends ParamsSchema = ParamsSchema> {
  readonly provides: Provides;
  readonly arrangement: ArrangementKind;
  readonly topologies: readonly SipTopologyKind[];
  readonly summary: string;
  readonly params?: P;
  readonly peers?: boolean;
  readonly splits?: (typeof SPLITS)[number];
  readonly sends?: readonly Direction[];
}

/** Check and freeze an algorithm module's metadata; a bad one is ERR_MODULE_DEFINITION naming each field. */
export function defineAlgorithm<P extends ParamsSchema = ParamsSchema>(meta: AlgorithmMeta<P>): AlgorithmMeta<P> {
  const result = AlgorithmMetaSchema?.safeParse(meta);
  if (result !== undefined && !result.success) {
    const bad = result.error.issues.map((i) => `${i.path.map(String).join('.') || 'meta'}: ${i.message}`).join('; ');
    throw new KernbenchError('ERR_MODULE_DEFINITION', `defineAlgorithm: ${bad}, got ${describeMeta(meta)}`);
  }
  return Object.freeze({ ...meta, topologies: Object.freeze([...meta.topologies]) });
}

/**
 * Is `v` metadata defineAlgorithm would accept (the export check of an algorithm
 * module)? On a thread other than main, which runs modules main checked: is it an
 * object saying what it provides.
 */
export function isAlgorithmMeta(v: unknown): v is AlgorithmMeta {
  if (AlgorithmMetaSchema !== undefined) return AlgorithmMetaSchema.safeParse(v).success;
  return typeof v === 'object' && v !== null && (PROVIDES as readonly unknown[]).includes((v as { provides?: unknown }).provides);
}

function describeMeta(meta: unknown): string {
  if (typeof meta !== 'object' || meta === null) return String(meta);
  return `{${Object.keys(meta).join(', ')}}`;
}

/**
 * The params of `meta` in one line for `kernbench list`: `params: root=corner|center
 * (default corner)`, or '' when it takes none. Read from the schema's JSON
 * Schema, so the list cannot drift from what is checked.
 */
export function paramsLine(meta: AlgorithmMeta): string {
  if (meta.params === undefined) return '';
  const z = zodOnMain;
  if (z === undefined) return `params: ${Object.keys(meta.params.shape).join(', ')}`;
  let json: { properties?: Record<string, { enum?: unknown[]; type?: unknown; default?: unknown }> };
  try {
    json = z.toJSONSchema(meta.params, { io: 'input', unrepresentable: 'any' }) as typeof json;
  } catch (e) {
    // A user's schema zod cannot describe: name the keys only.
    void e;
    return `params: ${Object.keys(meta.params.shape).join(', ')}`;
  }
  const parts = Object.entries(json.properties ?? {}).map(([k, p]) => {
    const values = p.enum ? p.enum.map(String).join('|') : String(p.type ?? 'any');
    return `${k}=${values}${p.default === undefined ? '' : ` (default ${String(p.default)})`}`;
  });
  return `params: ${parts.join(', ')}`;
}

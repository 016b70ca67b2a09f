// Runs on: any thread. Owns: the zod schema of a topology file (the hardware
// model) and the types derived from it. Defaults live here, once, with their
// meaning; nothing else in kernbench restates them. lib/config/topology-schema.ts
// re-exports it for the loaders; it lives beside the machine because the
// `system.sips` part is the SIP topology kinds' own (./kinds/: the names a file
// may give and each kind's grid rule), and lib/config sits above lib/topology.
import { z } from 'zod';
import { gridOrProblem, type SipTopologyKind } from './define-kind.js';
import { fabricOrProblem } from './fabric.js';
import { findSipKind, sipKinds, type KindModuleUrl } from './kind-catalog.js';
import { SIP_TOPOLOGIES } from './kind-registry.js';

/** A throughput or bandwidth: a positive number, or `.inf` in YAML for "free" (ideal topologies). */
export const throughput = z.union([z.number().positive(), z.literal(Infinity)], {
  error: (iss) => `expected a positive number or .inf, got ${JSON.stringify(iss.input)}`,
});
const latencyNs = z.number().nonnegative();
const positiveInt = z.number().int().positive();

export { SIP_TOPOLOGIES };
export const CORNERS = ['nw', 'ne', 'sw', 'se'] as const;

/**
 * `system.sips.topology`: a shipped kind's name, or a path to a user's kind
 * module (relative to the topology file; to the working directory in a
 * `--set`). The loader (lib/config/load.ts) turns the path into the module's
 * file URL, which is what a loaded topology carries to every thread.
 */
const unknownKind = (iss: { input?: unknown }): string =>
  `unknown SIP topology kind; expected one of ${SIP_TOPOLOGIES.join('|')} or a path to a .ts, .mts, .js or .mjs kind module, got ${JSON.stringify(iss.input)}`;
const SipKindSchema = z.union(
  [z.enum(SIP_TOPOLOGIES as [SipTopologyKind, ...SipTopologyKind[]], { error: unknownKind }), z.string({ error: unknownKind }).regex(/[\\/]|\.(?:m?ts|m?js)$/, { error: unknownKind }) as unknown as z.ZodType<KindModuleUrl>],
  { error: unknownKind },
);

/** The shipped kinds that take params, and theirs (the JSON Schema's description; each kind's schema checks them). */
const KIND_PARAMS = sipKinds()
  .filter((k) => k.params)
  .map((k) => `${k.name}: ${Object.keys(k.params?.shape ?? {}).join(', ')}`)
  .join('; ');

export const MemorySpaceSchema = z.strictObject({
  /** Capacity in bytes of one instance (one PE's TCM, one cube's SRAM or HBM). */
  bytes: positiveInt,
  /** Bandwidth in GB/s (1e9 bytes per second, so bytes / bandwidth = ns). */
  bandwidth_gb_s: throughput,
  /** Fixed access latency in ns, paid once per access. */
  latency_ns: latencyNs,
});

export const LinkClassSchema = z.strictObject({
  /** Bandwidth in GB/s. */
  bandwidth_gb_s: throughput,
  /** Per-hop latency (alpha) in ns; k hops cost k * latency_ns (cut-through). */
  latency_ns: latencyNs,
});

/**
 * A topology's own IPCQ window: values that replace the CCL file's `defaults` for
 * runs on this topology (an algorithm entry and `--set ccl.<field>` still win).
 * For machines whose bandwidth-delay product the shared defaults cannot cover
 * (the ideal topologies, docs/timing.md "The credit window").
 */
export const TopologyCclSchema = z.strictObject({
  /** Slots per IPCQ ring. */
  n_slots: positiveInt.optional(),
  /** Bytes per slot. */
  slot_size: positiveInt.optional(),
  /** Payloads larger than this are cut into pieces of this many bytes (<= slot_size). */
  vc_chunk_size: positiveInt.optional(),
  /** Bytes of one credit message. */
  ipcq_credit_size_bytes: positiveInt.optional(),
});

export const TopologySchema = z
  .strictObject({
    name: z.string().min(1),
    description: z.string().optional(),
    system: z.strictObject({
      sips: z.strictObject({
        count: positiveInt,
        topology: SipKindSchema,
        /** Grid width, for kinds whose grid rule takes one (2-D kinds: w * h must equal count). */
        w: positiveInt.optional(),
        /** Grid height for 2-D kinds. */
        h: positiveInt.optional(),
        /** The kind's own settings, checked by its `params` schema (lib/topology/kinds/<kind>.ts). */
        params: z.record(z.string(), z.unknown()).optional().describe(`The kind's own settings, checked by its params schema. ${KIND_PARAMS}`),
      }),
    }),
    sip: z.strictObject({
      cube_mesh: z.strictObject({ w: positiveInt, h: positiveInt }),
    }),
    cube: z.strictObject({
      pe_layout: z.strictObject({
        corners: z.array(z.enum(CORNERS)).min(1),
        pe_per_corner: positiveInt,
      }),
    }),
    timing: z.strictObject({
      pe: z.strictObject({
        /** PE clock in GHz: one cycle is 1000 / clock_ghz ps. */
        clock_ghz: z.number().positive(),
        /** f16/bf16 multiply-accumulates per cycle of the matrix unit (f32 runs at half rate). */
        gemm_macs_per_cycle: throughput,
        /** Elements per cycle of the vector unit (add, mul, max, ...). */
        vector_lanes: throughput,
      }),
      memory: z.strictObject({
        tcm: MemorySpaceSchema,
        sram: MemorySpaceSchema,
        hbm: MemorySpaceSchema,
      }),
      links: z.strictObject({
        pe_pe: LinkClassSchema,
        cube_cube: LinkClassSchema,
        sip_sip: LinkClassSchema,
      }),
      /**
       * How flows that cross one physical link at once share it. `none`: every
       * transfer has its route to itself (the cost model's law, and the fast path).
       * `max_min`: max-min fair sharing of each link's bandwidth among the IPCQ
       * pieces crossing it (docs/decisions/0023-links-as-shared-resources.md).
       */
      link_sharing: z.enum(['none', 'max_min']).default('max_min'),
      /**
       * With max_min: each piece first takes its channel's own fast path, checking that
       * no other flow crosses its links at once; a session where two do is run again with
       * every piece through the coordinator's link arbiter. Same times either way; `false`
       * sends every piece through the arbiter from the start (for checking the two agree).
       */
      link_fast_path: z.boolean().default(true),
      dma: z.strictObject({
        /** Cost in ns to set up one DMA transfer (each IPCQ piece is one transfer). */
        setup_ns: latencyNs,
      }),
    }),
    /** IPCQ settings for this machine, over the CCL file's defaults (TopologyCclSchema). */
    ccl: TopologyCclSchema.optional(),
  })
  .superRefine((t, ctx) => {
    // The kind's own grid rule, params and fabric (lib/topology/kinds/<kind>.ts). A user's
    // kind not yet loaded on this thread is checked once it is (lib/loader/topology-kind.ts).
    const s = t.system.sips;
    const kind = findSipKind(s.topology);
    const at = (where: 'count' | 'w' | 'h' | 'params' | undefined): { path: string[]; input: unknown } =>
      where === undefined ? { path: ['system', 'sips'], input: s } : { path: ['system', 'sips', where], input: s[where] };
    const r = kind === undefined ? undefined : gridOrProblem(kind.grid({ count: s.count, w: s.w, h: s.h }));
    if (r !== undefined && 'problem' in r) ctx.addIssue({ code: 'custom', message: r.problem, ...at(r.at) });
    if (kind !== undefined && !kind.params) {
      for (const key of Object.keys(s.params ?? {})) ctx.addIssue({ code: 'custom', path: ['system', 'sips', 'params', key], message: `${kind.name} takes no params, got unknown key '${key}'`, input: s.params?.[key] });
    }
    const params = kind?.params?.strict().safeParse(s.params ?? {}, { reportInput: true });
    if (params !== undefined && !params.success) {
      for (const i of params.error.issues) {
        const under = ['system', 'sips', 'params', ...i.path.map((k) => (typeof k === 'symbol' ? String(k) : k))];
        // An unknown key is reported at the key itself, naming it (as the file's own unknown keys are).
        if (i.code === 'unrecognized_keys') for (const key of i.keys) ctx.addIssue({ code: 'custom', path: [...under, key], message: `${kind?.name} takes params ${Object.keys(kind?.params?.shape ?? {}).join('|')}, got unknown key '${key}'`, input: key });
        else ctx.addIssue({ code: 'custom', path: under, message: i.message, input: i.input });
      }
    }
    if (kind?.fabric && (params === undefined || params.success) && (r === undefined || !('problem' in r))) {
      const f = fabricOrProblem(kind.fabric(s.count, (params?.data ?? {}) as Record<string, unknown>));
      if ('problem' in f) ctx.addIssue({ code: 'custom', message: f.problem, ...at(f.at) });
    }
    const corners = t.cube.pe_layout.corners;
    if (new Set(corners).size !== corners.length) {
      ctx.addIssue({ code: 'custom', path: ['cube', 'pe_layout', 'corners'], message: `corners must not repeat, got ${JSON.stringify(corners)}`, input: corners });
    }
  });

export type Topology = z.infer<typeof TopologySchema>;
export type TopologyCcl = z.infer<typeof TopologyCclSchema>;
export type { SipTopologyKind } from './define-kind.js';
export type MemorySpaceName = keyof Topology['timing']['memory'];
export type LinkClassName = keyof Topology['timing']['links'];

// Runs on: any thread. Owns: the zod schema of a CCL file (`topologies/ccl.yaml`
// or a `ccl:` section) and the resolved per-run CCL configuration.
// Precedence of a resolved field: CLI `--set ccl.<field>` > algorithm entry > the
// topology's `ccl:` section (IPCQ window only, lib/topology/schema.ts) > defaults.
//
// What `module:` names and what `params:` may hold depend on the algorithm
// modules (their `meta`), which live above this layer: lib/ccl/resolve.ts
// checks them, with the positions this file's loader keeps.
import { z } from 'zod';
import { DTYPES, bytesPerElement } from '../dtype/index.js';
import { SIP_TOPOLOGIES } from './topology-schema.js';

export const BUFFER_KINDS = ['tcm', 'sram', 'hbm'] as const;
export const BACKPRESSURE_MODES = ['poll', 'sleep'] as const;

const positiveInt = z.number().int().positive();

/**
 * Channel sets of a run: how many process groups' collectives can have IPCQ
 * rings of their own. The world (and every plain launch) uses set 0; each group
 * made by newGroup takes the smallest set that no earlier group sharing a rank
 * with it has, so groups that share no rank (tensor-parallel groups side by
 * side) share one set. A collective on a group whose set is >= channel_sets is
 * refused with ERR_CHANNEL_SETS_EXHAUSTED naming this setting. Each set is a full copy of
 * every PE's four rings (n_slots x slot_size each) in a buffer of its own:
 * address space up front, memory once used (docs/decisions/0020-a-channel-set-per-process-group.md).
 */
const channelSets = positiveInt.max(64);
/**
 * Peer ranks of a run: the largest group whose kernels address peers by rank
 * (tl.peer, lib/kernel/context.ts); 0 or absent: no kernel may. Each channel set
 * gets a family of ceil((peer_ranks - 1) / 4) peer sets, one ring per ordered
 * pair of ranks at each distance (docs/decisions/0060-peer-channels.md).
 */
const peerRanks = z.number().int().min(0).max(4096);
/** The default channel_sets: the world and three sets for groups (e.g. TP groups and DP groups). */
export const DEFAULT_CHANNEL_SETS = 4;

/** Fields that `defaults` may set and any algorithm entry may override. */
const tunables = {
  /** Memory space that holds IPCQ staging slots; changes the receive cost. */
  buffer_kind: z.enum(BUFFER_KINDS),
  /** How a thread waits for a slot or a credit: spin with a budget (poll) or park (sleep). Virtual time is the same. */
  backpressure: z.enum(BACKPRESSURE_MODES),
  /** Slots per IPCQ ring. */
  n_slots: positiveInt,
  /** Bytes per slot. */
  slot_size: positiveInt,
  /** Payloads larger than this are cut into pieces of this many bytes (<= slot_size). */
  vc_chunk_size: positiveInt,
  /** Bytes of one credit message (its cost on the reverse link). */
  ipcq_credit_size_bytes: positiveInt,
  /** Elements per CCL rank in the ccl_allreduce bench. */
  n_elem: positiveInt,
};

/** An entry's `params:` mapping; the module's own schema gives it meaning. */
const AlgorithmParamsSchema = z.record(z.string(), z.unknown());

/**
 * The module of each collective other than all-reduce (an all-reduce is the
 * entry's own `module:`): `collectives: {reduce: {module: binomial_reduce}}`.
 * A collective left out takes its default (docs/algorithms/partners.md, "Choosing an
 * algorithm"). An entry's `collectives` replaces the defaults' whole mapping.
 * The keys are lib/ccl/define-algorithm.ts's COLLECTIVES (this layer cannot
 * import it; test/ccl-partners.test.ts checks they agree).
 */
const CollectiveChoiceSchema = z.strictObject({
  /** A shipped algorithm providing this collective, or a path to a module file (relative to this file). */
  module: z.string().min(1),
  /** Parameters of the module (its meta.params). */
  params: AlgorithmParamsSchema.optional(),
});
const CollectivesSchema = z.strictObject({
  all_to_all: CollectiveChoiceSchema.optional(),
  reduce: CollectiveChoiceSchema.optional(),
  gather: CollectiveChoiceSchema.optional(),
  scatter: CollectiveChoiceSchema.optional(),
});

/**
 * A file's `defaults`. Only `algorithm` is required: a tunable a file leaves out
 * takes kernbench's own default, the one written in topologies/ccl.yaml (that
 * file gives every tunable; lib/config/load.ts fills the gaps from it).
 */
export const CclDefaultsSchema = z.strictObject({
  /** Name of the algorithm entry to run when none is chosen on the CLI. */
  algorithm: z.string().min(1),
  ...Object.fromEntries(Object.entries(tunables).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof tunables]: z.ZodOptional<(typeof tunables)[K]>;
  },
  /** Channel sets (see channelSets above); default DEFAULT_CHANNEL_SETS. */
  channel_sets: channelSets.optional(),
  /** Peer ranks (see peerRanks above); default 0. */
  peer_ranks: peerRanks.optional(),
  /** Modules of the other collectives (see CollectivesSchema above). */
  collectives: CollectivesSchema.optional(),
});

/** Names of the fields a `defaults` block may set besides `algorithm`. */
export const TUNABLES = Object.keys(tunables) as (keyof typeof tunables)[];

export const CclAlgorithmEntrySchema = z.strictObject({
  /** A shipped algorithm (`kernbench list`, e.g. `ring_allreduce`) or a path to a .ts, .mts, .js or .mjs file, relative to this file. */
  module: z.string().min(1),
  /** Parameters of the module (its meta.params schema checks them), e.g. `{root: center}`. */
  params: AlgorithmParamsSchema.optional(),
  /** Logical topology the algorithm arranges CCL ranks in. */
  topology: z.enum(SIP_TOPOLOGIES),
  /** Overrides the number of ranks (default: the topology's SIP count). */
  world_size: positiveInt.optional(),
  ...Object.fromEntries(Object.entries(tunables).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof tunables]: z.ZodOptional<(typeof tunables)[K]>;
  },
  /** Channel sets (see channelSets above). */
  channel_sets: channelSets.optional(),
  /** Peer ranks (see peerRanks above). */
  peer_ranks: peerRanks.optional(),
  /** Modules of the other collectives (see CollectivesSchema above). */
  collectives: CollectivesSchema.optional(),
});

export const CclFileSchema = z
  .strictObject({
    defaults: CclDefaultsSchema,
    algorithms: z.record(z.string(), CclAlgorithmEntrySchema),
  })
  .superRefine((f, ctx) => {
    const known = Object.keys(f.algorithms);
    if (!known.includes(f.defaults.algorithm)) {
      ctx.addIssue({ code: 'custom', path: ['defaults', 'algorithm'], message: `expected one of ${known.join('|')}, got '${f.defaults.algorithm}'`, input: f.defaults.algorithm });
    }
  });

export const ResolvedCclSchema = z
  .strictObject({
    algorithm: z.string().min(1),
    module: z.string().min(1),
    params: AlgorithmParamsSchema.default({}),
    topology: z.enum(SIP_TOPOLOGIES),
    world_size: positiveInt.optional(),
    ...tunables,
    channel_sets: channelSets.default(DEFAULT_CHANNEL_SETS),
    peer_ranks: peerRanks.optional(),
    collectives: CollectivesSchema.optional(),
  })
  .superRefine((c, ctx) => {
    if (c.vc_chunk_size > c.slot_size) {
      ctx.addIssue({ code: 'custom', path: ['vc_chunk_size'], message: `must be <= slot_size (${c.slot_size}), got ${c.vc_chunk_size}`, input: c.vc_chunk_size });
    }
    // A piece carries whole elements: smaller than the widest element, no piece could hold one
    // (the send never starts and the run would end as a deadlock).
    for (const k of ['slot_size', 'vc_chunk_size'] as const) {
      if (c[k] < WIDEST_ELEMENT_BYTES) {
        ctx.addIssue({ code: 'custom', path: [k], message: `must hold one element of every dtype (${DTYPES.join('|')}): at least ${WIDEST_ELEMENT_BYTES} bytes, got ${c[k]}`, input: c[k] });
      }
    }
  });

/** Bytes of the widest element type a collective may carry. */
const WIDEST_ELEMENT_BYTES = Math.max(...DTYPES.map(bytesPerElement));

export type CclFile = z.infer<typeof CclFileSchema>;
/** One algorithm entry merged with the defaults and `--set ccl.` overrides (resolveCcl); its module not yet checked. */
export type MergedCcl = z.infer<typeof ResolvedCclSchema>;
/**
 * The CCL configuration of a run (lib/ccl/resolve.ts): merged, its module
 * loaded and checked, its params parsed by the module's schema.
 */
export type ResolvedCcl = MergedCcl & {
  /** File URL of the algorithm module: every thread imports this one. */
  module_url: string;
  /** The `collectives` modules, each loaded and checked: its file URL and its params parsed by its schema. */
  collective_modules?: { [K in keyof z.infer<typeof CollectivesSchema>]?: { module: string; module_url: string; params: Record<string, unknown> } };
};
export type BufferKind = (typeof BUFFER_KINDS)[number];
export type Backpressure = (typeof BACKPRESSURE_MODES)[number];

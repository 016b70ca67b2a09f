// Runs on: main (builds it) and every thread (reads it). Owns: the SessionPlan,
// the JSON-safe description of one session that every thread derives the same
// facts from: the machine, the CCL settings, the thread placement and the
// shared-memory dimensions.
import type { ResolvedCcl } from '../config/ccl-schema.js';
import type { Topology } from '../config/topology-schema.js';
import { UsageError } from '../errors.js';
import type { LayoutDims } from '../shm/layout.js';
import { Machine } from '../topology/machine.js';
import { tabulate } from '../tabulate.js';

/** `rank` (one executor per SIP), `pe` (one per PE), or a fixed number of executors (1 is the reference). */
export type ThreadLayout = 'rank' | 'pe' | number;

export const DEFAULT_THREADS: ThreadLayout = 'rank';
/** Backing bytes for all tensor allocations of a session (allocated lazily by the OS). */
export const DEFAULT_ARENA_BYTES = 1024 * 1024 * 1024;

export interface SessionPlan {
  topologyName: string;
  topology: Topology;
  ccl: ResolvedCcl;
  threads: ThreadLayout;
  executors: number;
  /** Executor that runs each PE, by global PE id. */
  peExecutor: number[];
  /** Executor that runs each rank's host code, by rank (= SIP). */
  hostExecutor: number[];
  dims: LayoutDims;
  /** Seed of the scheduling-jitter mode, or null. */
  jitterSeed: number | null;
  /** Record a virtual-time trace (--trace). */
  trace: boolean;
  /** Timing-only mode (--no-data): kernels move no bytes and compute nothing; virtual times are unchanged. */
  noData: boolean;
  /** Record accesses and orderings, and fail the session on a data race (--check-races; lib/race/). */
  checkRaces: boolean;
}

/**
 * The --threads value: `rank`, `pe`, or a count of executors written as a plain
 * positive decimal integer (no sign, exponent, fraction or hex: `1e3` and `0x2`
 * are refused rather than read as 1000 and 2).
 */
export function parseThreadLayout(s: string): ThreadLayout {
  if (s === 'rank' || s === 'pe') return s;
  if (/^[1-9][0-9]*$/.test(s) && Number.isSafeInteger(Number(s))) return Number(s);
  throw new UsageError(`--threads takes rank, pe or a positive integer (decimal digits only), got '${s}'`);
}

export function buildPlan(opts: {
  topologyName: string;
  topology: Topology;
  ccl: ResolvedCcl;
  threads: ThreadLayout;
  jitterSeed: number | null;
  trace?: boolean;
  noData?: boolean;
  checkRaces?: boolean;
  arenaBytes?: number;
}): SessionPlan {
  const m = new Machine(opts.topology);
  let executors: number;
  let peExecutor: number[];
  if (opts.threads === 'rank') {
    executors = m.sips;
    peExecutor = tabulate(m.totalPes, (id) => m.coord(id).sip);
  } else if (opts.threads === 'pe') {
    executors = m.totalPes;
    peExecutor = tabulate(m.totalPes, (id) => id);
  } else {
    executors = Math.min(opts.threads, m.totalPes);
    // Spread PEs evenly: contiguous blocks keep a SIP's PEs together where possible.
    peExecutor = tabulate(m.totalPes, (id) => Math.floor((id * executors) / m.totalPes));
  }
  const hostExecutor = tabulate(m.sips, (sip) => peExecutor[m.peId({ sip, cube: 0, pe: 0 })]);
  return {
    topologyName: opts.topologyName,
    topology: opts.topology,
    ccl: opts.ccl,
    threads: opts.threads,
    executors,
    peExecutor,
    hostExecutor,
    jitterSeed: opts.jitterSeed,
    trace: opts.trace ?? false,
    noData: opts.noData ?? false,
    checkRaces: opts.checkRaces ?? false,
    dims: {
      executors,
      pes: m.totalPes,
      hosts: m.sips + 1,
      nSlots: opts.ccl.n_slots,
      // Timing-only mode backs no data: slots carry headers only, tensors get no arena bytes (lib/shm/allocator.ts).
      slotSize: opts.noData ? 0 : opts.ccl.slot_size,
      cubes: m.sips * m.cubesPerSip,
      arenaBytes: opts.noData ? 0 : (opts.arenaBytes ?? DEFAULT_ARENA_BYTES),
      // One buffer of rings per channel set (lib/shm/layout.ts), each the size of the world's.
      channelSets: opts.ccl.channel_sets,
    },
  };
}

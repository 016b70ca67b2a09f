// Runs on: main (builds it) and every thread (reads it). Owns: the SessionPlan,
// the JSON-safe description of one session that every thread derives the same
// facts from: the machine, the CCL settings, the thread placement and the
// shared-memory dimensions.
import type { ResolvedCcl } from './ccl-schema.js';
import type { Topology } from './topology-schema.js';
import { totalmem } from 'node:os';
import { ConfigError, KernbenchError } from '../errors.js';
import { ShmLayout, totalChannelSets, type LayoutDims } from '../shm/layout.js';
import { Machine } from '../topology/machine.js';
import { Links } from '../topology/links.js';
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
  /**
   * How link sharing (timing.link_sharing) is run: `none` (links not shared); `claimed`
   * (a piece proved alone on its links by its kernel's claims and the launch horizon takes
   * its channel's own fast path; any other goes through the link arbiter); `arbitrated`
   * (every piece is a flow the coordinator's link arbiter makes final). Both sharing modes
   * give the same times (docs/decisions/0100-claims-and-a-launch-horizon.md).
   */
  links: LinkMode;
  /** A PE clock past this stops the run (ps; Infinity: no limit; --max-virtual-time). */
  maxVirtualTimePs: number;
}

export type LinkMode = 'none' | 'claimed' | 'arbitrated';

/**
 * The --threads value: `rank`, `pe`, or a count of executors written as a plain
 * positive decimal integer (no sign, exponent, fraction or hex: `1e3` and `0x2`
 * are refused rather than read as 1000 and 2).
 */
export function parseThreadLayout(s: string): ThreadLayout {
  if (s === 'rank' || s === 'pe') return s;
  if (/^[1-9][0-9]*$/.test(s) && Number.isSafeInteger(Number(s))) return Number(s);
  throw new KernbenchError('ERR_INVALID_THREADS', `--threads takes rank, pe or a positive integer (decimal digits only), got '${s}'`);
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
  maxVirtualTimePs?: number;
}): SessionPlan {
  const m = new Machine(opts.topology);
  const timing = opts.topology.timing;
  const links: LinkMode = timing.link_sharing === 'none' ? 'none' : timing.link_fast_path ? 'claimed' : 'arbitrated';
  // The layout's thread count first: the command slots are per thread, so --threads N
  // needs far less shared memory than one thread per rank.
  const executors = layoutExecutors(opts.threads, m);
  // Before anything is sized per PE: a configuration too large for this machine is
  // refused with its figure, not met by a V8 fatal error or a RangeError mid-allocation.
  const sharedBytes = checkSharedMemory(sessionDims(m, opts.ccl, executors, opts.noData ?? false, opts.arenaBytes));
  checkThreadMemory(opts.threads, executors, sharedBytes);
  let peExecutor: number[];
  if (opts.threads === 'rank') peExecutor = tabulate(m.totalPes, (id) => m.coord(id).sip);
  else if (opts.threads === 'pe') peExecutor = tabulate(m.totalPes, (id) => id);
  // Spread PEs evenly: contiguous blocks keep a SIP's PEs together where possible.
  else peExecutor = tabulate(m.totalPes, (id) => Math.floor((id * executors) / m.totalPes));
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
    links,
    maxVirtualTimePs: opts.maxVirtualTimePs ?? Infinity,
    dims: { ...sessionDims(m, opts.ccl, executors, opts.noData ?? false, opts.arenaBytes), links: links === 'claimed' ? new Links(m).count : 0 },
  };
}

/** Executor threads of a layout on `m`: `rank` one per SIP, `pe` one per PE, N at most one per PE. */
export function layoutExecutors(threads: ThreadLayout, m: Machine): number {
  return threads === 'rank' ? m.sips : threads === 'pe' ? m.totalPes : Math.min(threads, m.totalPes);
}

/** The shared-memory dimensions of a session on `m` with `executors` threads. */
export function sessionDims(m: Machine, ccl: ResolvedCcl, executors: number, noData: boolean, arenaBytes: number | undefined): LayoutDims {
  return {
    executors,
    pes: m.totalPes,
    hosts: m.sips + 1,
    nSlots: ccl.n_slots,
    // Timing-only mode backs no data: slots carry headers only, tensors get no arena bytes (lib/shm/allocator.ts).
    slotSize: noData ? 0 : ccl.slot_size,
    cubes: m.sips * m.cubesPerSip,
    arenaBytes: noData ? 0 : (arenaBytes ?? DEFAULT_ARENA_BYTES),
    // One buffer of rings per channel set (lib/shm/layout.ts), each the size of the world's.
    channelSets: totalChannelSets(ccl.channel_sets, ccl.peer_ranks),
  };
}

/** Largest single shared buffer: slot offsets are unsigned 32-bit (lib/ipcq/ring.ts). */
const MAX_BUFFER_BYTES = 2 ** 32 - 1;

const gib = (b: number): string => `${(b / 2 ** 30).toFixed(b < 2 ** 30 ? 3 : 1)} GiB`;

/**
 * Refuse a session whose shared buffers (lib/shm/shared-state.ts SharedState.create)
 * cannot be allocated here: one larger than MAX_BUFFER_BYTES, or all of them
 * together more than this machine's memory (os.totalmem). ERR_CONFIG_TOO_LARGE, with the
 * figures: what each buffer needs and what is available.
 */
export function checkSharedMemory(dims: LayoutDims): number {
  const L = new ShmLayout(dims);
  const parts: [string, number][] = [
    ['IPCQ slots', L.ipcqSetBytes * L.channelSets],
    ['tensor arena', dims.arenaBytes],
    ['control words', L.ctlWords * 4 + L.timesWords * 8],
    ['command and error slots', L.cmdBytes],
  ];
  const total = parts.reduce((a, [, b]) => a + b, 0);
  const what = parts.map(([k, b]) => `${k} ${gib(b)}`).join(', ');
  const shape = `${dims.pes} PEs, ${L.channelSets} channel set(s) of ${dims.pes * 4} rings x ${dims.nSlots} slots x ${dims.slotSize} B`;
  const largest = Math.max(L.ipcqSetBytes, dims.arenaBytes, L.ctlWords * 4, L.timesWords * 8, L.cmdBytes);
  if (largest > MAX_BUFFER_BYTES) {
    throw new ConfigError('ERR_CONFIG_TOO_LARGE', [{ file: '(configuration)', path: 'shared memory', message: `one shared buffer would need ${gib(largest)}, more than the ${gib(MAX_BUFFER_BYTES + 1)} a buffer may hold (${shape}; ${what}); lower ccl.n_slots, ccl.slot_size or the machine's size, got ${largest} bytes` }]);
  }
  const available = totalmem();
  if (!Number.isFinite(total) || total > available) {
    throw new ConfigError('ERR_CONFIG_TOO_LARGE', [{ file: '(configuration)', path: 'shared memory', message: `this configuration needs ${gib(total)} of shared memory (${shape}; ${what}), more than this machine's ${gib(available)}; lower ccl.n_slots, ccl.slot_size, ccl.channel_sets or the machine's size, got ${total} bytes` }]);
  }
  return total;
}

/**
 * What one more thread costs at the least: a bare worker's isolate, stack and heaps
 * (about 9 MiB each for 256 bare workers, issue 26; decision 0125).
 */
export const THREAD_FLOOR_BYTES = 8 * 2 ** 20;

/**
 * Refuse a layout whose threads cannot all start on this machine: `executors` threads at
 * THREAD_FLOOR_BYTES each, beside `sharedBytes` of shared buffers, more than `available`
 * (os.totalmem). ERR_THREADS_EXCEED_MEMORY, naming the layout and the largest --threads N
 * that fits (decision 0125).
 */
export function checkThreadMemory(threads: ThreadLayout, executors: number, sharedBytes: number, available = totalmem()): void {
  const need = executors * THREAD_FLOOR_BYTES + sharedBytes;
  if (need <= available) return;
  const fits = Math.max(1, Math.min(executors - 1, Math.floor((available - sharedBytes) / THREAD_FLOOR_BYTES)));
  throw new KernbenchError(
    'ERR_THREADS_EXCEED_MEMORY',
    `--threads ${threads} starts ${executors} threads, at least ${gib(executors * THREAD_FLOOR_BYTES)} beside ${gib(sharedBytes)} of shared memory, more than this machine's ${gib(available)}; run with --threads N for N up to ${fits} (--threads 2 runs any size whose shared memory fits), got ${executors} threads`,
  );
}

/** checkSharedMemory for a topology and CCL configuration (kernbench validate: what a run would allocate). */
export function checkSessionMemory(topology: Topology, ccl: ResolvedCcl, noData = false): void {
  const m = new Machine(topology);
  checkSharedMemory(sessionDims(m, ccl, m.sips, noData, undefined));
}

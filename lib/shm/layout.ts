// Runs on: any thread. Owns: the layout of every SharedArrayBuffer of a session,
// declared once. Call sites ask this module for a word index by name; nobody
// writes `ctl[3]`.
//
// A session has five buffers:
//   ctl     Int32Array   counters and status words (all cross-thread access via Atomics)
//   times   Float64Array virtual times in ps (written before, read after, a counter
//                        published through Atomics, which orders them)
//   ipcq    bytes[]      IPCQ ring slots, one buffer per channel set
//                        (docs/decisions/0020-a-channel-set-per-process-group.md):
//                        every slot's header with a small inline payload, then
//                        every slot's payload area (INLINE_PAYLOAD_BYTES)
//   arena   bytes        the memory store: HBM, SRAM and TCM allocations
//   cmd     bytes        command slots (kernel launches) per executor
//
// Every counter in ctl only goes up (head, tail, generation, doorbell); a
// waiter waits for `ctl[word] >= target`, which is the only wait condition in
// kernbench. That single form is what lets the coordinator decide deadlock
// exactly (see lib/coordinator/deadlock.ts).

/** Words at the start of ctl. */
export const HEADER = {
  /** Abort generation: 0 while the session is healthy; bumped once when it aborts. */
  ABORT: 0,
  /** Why it aborted (AbortKind). */
  ABORT_KIND: 1,
  /** Bumped once when the session ends; the coordinator and executors stop. */
  SESSION_END: 2,
  /** Bytes handed out from the arena (bump allocator, 64-byte aligned). */
  ARENA_TOP: 3,
  /** Total arrivals at host barriers; the k-th barrier of n ranks completes at k*n. */
  BARRIER_ARRIVALS: 4,
  /** The coordinator's doorbell (bumped to wake it early). */
  COORD_DOORBELL: 5,
  /** Deadlock-detector passes so far (observability and tests). */
  COORD_PASSES: 6,
  /** Spawned ranks that have settled (returned or thrown) in this session. */
  RANKS_SETTLED: 7,
  /**
   * Spawned ranks that failed on their own (not by an abort or a deadlock) in
   * this session. Bumped before RANKS_SETTLED. The coordinator aborts a
   * quiescent session as RANK_FAILED, not DEADLOCK, once it is non-zero
   * (docs/decisions/0015-root-causes-at-quiescence.md).
   */
  RANKS_FAILED: 8,
  /**
   * Shared-memory-channel requests published and not yet granted (lib/coordinator/arbiter.ts).
   * While it is non-zero, an actor that stops running rings the coordinator: it may
   * have been the last one that could still ask earlier than a pending request.
   */
  GRANTS_PENDING: 16,
  /** Non-zero while a thread runs an arbiter pass (a lock: the channels' free times and GRANT_SEQ change only under it); 2: the coordinator waits for it. */
  ARBITER_LOCK: 17,
  /** 1 while the coordinator is parked on COORD_DOORBELL; a ringer notifies only then. */
  COORD_PARKED: 18,
  /** Bumped on every actor state change (after its GEN): equal before and after a scan means no actor changed state during it. */
  STATE_EPOCH: 19,
  /**
   * Link flows requested and not yet final (timing.link_sharing: max_min;
   * lib/coordinator/link-arbiter.ts). While it is non-zero an actor that stops
   * running rings the coordinator, as for GRANTS_PENDING.
   */
  FLOWS_PENDING: 20,
  /**
   * Launch commands on their way to an executor (lib/pe/commands.ts): bumped
   * before a producer reserves a slot, dropped after the executor commits it.
   * Non-zero whenever some executor's CMD_RESERVE is ahead of its CMD_HEAD, so
   * one load tells the arbiters and the deadlock detector that a kernel may
   * start at a time no snapshot of the actors shows (commandInFlight).
   */
  COMMANDS_IN_FLIGHT: 21,
} as const;
/** Two cache lines: the arbiter's words (16..) stay off the line barrier arrivals write (word 4). */
const HEADER_WORDS = 32;

/**
 * Why a session aborted. Claimed once with compareExchange from NONE, so the
 * first aborter also owns the report slot (errorOffset(-1)): it writes the
 * report before it bumps ABORT. DEADLOCK's report is the DeadlockError; FAULT's
 * is the error that escaped on an executor thread (lib/executor/faults.ts).
 */
/** Bandwidth-phase intervals a link keeps for the optimistic overlap check (lib/ipcq/link-overlap.ts); beyond them, the nearest two are merged. */
export const LINK_INTERVALS = 8;
/** `times` words per link for that check: the count, then LINK_INTERVALS (join, end) pairs sorted by join, and room for one more while a new pair is merged in. */
export const LINK_SPAN = 1 + 2 * (LINK_INTERVALS + 1);

/** Why a session aborted. LINK_OVERLAP: two flows met on a link during an optimistic run; the run is replayed with every piece arbitrated (lib/ipcq/link-overlap.ts). */
export const ABORT_KIND = { NONE: 0, RANK_FAILED: 1, DEADLOCK: 2, FAULT: 3, LINK_OVERLAP: 4 } as const;

/** Per executor (and one extra slot for the main thread), EXEC_STRIDE words. */
export const EXEC = {
  /** Bumped by any thread that published something a waiter here may need. */
  DOORBELL: 0,
  /** Odd while the thread is parked in Atomics.waitAsync; producers notify only then. */
  SLEEP_GEN: 1,
  /** Command slots reserved by producers (multi-producer). */
  CMD_RESERVE: 2,
  /** Command slots consumed by the executor. */
  CMD_HEAD: 3,
} as const;
const EXEC_STRIDE = 16; // one cache line per thread

/** Per actor (PEs first, then hosts): what it is doing, for the deadlock detector. */
export const ACTOR = {
  /** ActorState. */
  STATE: 0,
  /** Bumped on every state change, so two equal snapshots mean nobody moved. */
  GEN: 1,
  /** While blocked: it waits for ctl[WAIT_WORD] >= WAIT_TARGET. */
  WAIT_WORD: 2,
  WAIT_TARGET: 3,
  /** WaitKind, to explain the wait in a deadlock report. */
  WAIT_KIND: 4,
  /** Kind-specific detail (ring id, PE id, ...). */
  WAIT_AUX: 5,
} as const;
const ACTOR_STRIDE = 8;

export const ACTOR_STATE = { IDLE: 0, RUNNING: 1, BLOCKED: 2, DONE: 3 } as const;
export const WAIT_KIND = { NONE: 0, IPCQ_DATA: 1, IPCQ_CREDIT: 2, KERNEL_DONE: 3, BARRIER: 4, COMMAND: 5, RANKS_DONE: 6, CHANNEL: 7, GRANT: 8, LINK: 9 } as const;

/** Most branches one `tl.parallel` may run (each waits as an actor of its own). */
export const MAX_BRANCHES = 4;

/**
 * Actors are everything that can wait: per PE its kernel task, its 8 DMA
 * channels (4 outbound, 4 inbound, which run sends and receives in the
 * background) and MAX_BRANCHES branches of a `tl.parallel`, then one host per
 * rank, then the main thread's host.
 * A DMA channel serves every channel set (its PE runs one kernel, of one
 * process group, at a time), so channel sets add rings, not actors.
 */
export const ACTORS_PER_PE = 1 + 2 * 4 + MAX_BRANCHES;

/** Per PE. */
export const PE = {
  /** Kernels this PE has finished (its results are in the record table). */
  DONE_SEQ: 0,
  /** Kernels launched on this PE; a launch takes the next sequence number. */
  LAUNCHED: 1,
  /** Bytes allocated in this PE's TCM. */
  TCM_TOP: 2,
  /** Shared-memory-channel requests this PE has made (its request is in the GRANT block of `times`). */
  REQ_SEQ: 3,
  /** Requests granted (by an arbiter pass on any thread); REQ_SEQ > GRANT_SEQ means one is pending. */
  GRANT_SEQ: 4,
  /**
   * 1 while the PE is shared by the hosts of the live spawn (main found a tensor on it among the
   * spawn's arguments), else 0: launches onto it are ordered by (virtual time, host) (lib/pe/admission.ts,
   * docs/decisions/0090-launch-order-by-sharing-at-spawn.md). Written by main only, before the ranks start and after they end.
   */
  SHARED: 5,
  /** Operations finished per DMA channel (8 words: outbound east..south, inbound east..south). */
  CHAN_DONE: 8,
  /** Link flows requested per outbound channel (4 words, east..south; its request is in the FLOW block of `times`). */
  FLOW_REQ: 16,
  /** Link flows made final per outbound channel (4 words); FLOW_REQ > FLOW_DONE means one is pending. */
  FLOW_DONE: 20,
} as const;
const PE_STRIDE = 24;

/** Per IPCQ ring. Tail and head sit on separate halves of a 64-byte line. */
export const RING = {
  /** Messages published by the sender (monotonic). */
  TAIL: 0,
  /** The tail the receiver is waiting for (monotonic). The sender wakes another thread only when it reaches it. */
  DATA_WANT: 4,
  /** Messages consumed by the receiver (monotonic); head - tail is the occupancy. */
  HEAD: 8,
  /** The head the sender is waiting for (a credit; monotonic). The receiver wakes another thread only for it. */
  CREDIT_WANT: 12,
} as const;
const RING_STRIDE = 16;

/**
 * Directions of a PE's IPCQ ports. A ring is identified by (channel set,
 * sender PE, direction): each process group that runs collectives uses the
 * rings of its own channel set (the world and plain launches: set 0), so a
 * subgroup's traffic never shares a ring with another group's
 * (docs/decisions/0020-a-channel-set-per-process-group.md).
 */
export const DIRECTIONS = ['east', 'west', 'north', 'south'] as const;
export type Direction = (typeof DIRECTIONS)[number];
export const DIR_COUNT = DIRECTIONS.length;

/**
 * Peer channels (docs/decisions/0060-peer-channels.md): each of the `channelSets`
 * group sets has a family of peerSetsPerGroup(peerRanks) sets after the group
 * sets; the ring from group rank r to rank q (distance k = (q - r) mod p, 1 <= k < p)
 * is the sender PE's ring of direction (k - 1) mod 4 in the family's set
 * floor((k - 1) / 4). Every ordered pair owns a ring; one never used is never touched.
 */
export function peerSetsPerGroup(peerRanks: number | undefined): number {
  return peerRanks === undefined || peerRanks < 2 ? 0 : Math.ceil((peerRanks - 1) / DIR_COUNT);
}

/** Every channel set of a session: the group sets and their peer families. */
export function totalChannelSets(channelSets: number, peerRanks: number | undefined): number {
  return channelSets * (1 + peerSetsPerGroup(peerRanks));
}

/** The set and direction of the peer ring at distance `k` (1 <= k < peerRanks) in group set `groupSet`'s family. */
export function peerRing(channelSets: number, peerRanks: number, groupSet: number, k: number): { set: number; dir: number } {
  const f = peerSetsPerGroup(peerRanks);
  return { set: channelSets + groupSet * f + Math.floor((k - 1) / DIR_COUNT), dir: (k - 1) % DIR_COUNT };
}

/** IPCQ slot header (bytes): arrival time, credit time, payload size, sender, receiver, sequence. */
export const SLOT = {
  /** f64: virtual time the payload arrives at the receiver. */
  ARRIVAL_PS: 0,
  /** f64: virtual time the receiver freed the slot (the credit's departure). */
  FREED_PS: 8,
  /** i32: payload bytes in this slot. */
  BYTES: 16,
  /** i32: sender PE id (matching is by address, not by direction name). */
  SENDER: 20,
  /** i32: receiver PE id. */
  RECEIVER: 24,
  /** i32: message sequence number on this ring. */
  SEQ: 28,
  HEADER_BYTES: 32,
} as const;

/**
 * Payload bytes a slot holds next to its header: a message of at most this many
 * bytes is written there instead of in the slot's own payload area. The headers
 * (with these bytes) of every slot of a set lie together, 128 bytes a slot, so a
 * ring of small messages touches one page instead of a page per slot: a ring
 * all-reduce at p = 1024 x 64 KiB sends 64-byte messages through 8 slots of
 * 64 KiB per ring, and touched ~28 MiB of slot pages where the headers take 1 MiB
 * (docs/benchmarks.md, "Peak memory", 2026-11-25; decision 0034).
 */
export const INLINE_PAYLOAD_BYTES = 96;

/** Per PE record table in `times`: one row per finished kernel. */
export const RECORD = {
  START_PS: 0,
  END_PS: 1,
  /** 0 ok, 1 threw. */
  STATUS: 2,
  /** Launch tag chosen by the host (collective sequence or -1). */
  TAG: 3,
  /** Virtual time the kernel reported as spent waiting on communication (tl.reportWaitPs), 0 if none. */
  WAIT_PS: 4,
  /** The launch's ticket (its PE.LAUNCHED number): the row of run k holds ticket k unless launches were ordered (lib/pe/admission.ts). */
  TICKET: 5,
  WIDTH: 6,
} as const;
export const RECORD_CAPACITY = 4096;

/** Per PE block in `times`: its pending request for a cube's shared memory channel, and the answer. */
export const GRANT = {
  /** Virtual time the PE issues the access. */
  AT_PS: 0,
  BYTES: 1,
  /** 0 SRAM, 1 HBM, 2 admission of a launch (GRANT_LAUNCH: no channel; done = AT_PS). */
  SPACE: 2,
  /** Global cube index (sip * cubesPerSip + cube). */
  CUBE: 3,
  /** Written by the coordinator: virtual time the access completes. */
  DONE_PS: 4,
  WIDTH: 5,
} as const;

/** GRANT.SPACE of a PE's request to run its next ordered launch (lib/pe/admission.ts). */
export const GRANT_LAUNCH = 2;

/** Per outbound DMA channel block in `times` (timing.link_sharing: max_min): its pending link flow, and the answer. */
export const FLOW = {
  /** Virtual time the piece's first byte enters the route (after its credit and the DMA setup). */
  START_PS: 0,
  /** The piece's serialisation time alone on its route (ps; its share of the payload's rounded total). */
  SERIAL_PS: 1,
  /** The receiving PE. */
  PEER: 2,
  /** The route's latency (hops * alpha): paid before the bandwidth phase (CM02's order). */
  LATENCY_PS: 3,
  /** The piece may not enter its links before this (the arrival of the sends its kernel has waited for; 0: no bound). */
  JOIN_MIN_PS: 4,
  /** Written by the coordinator: when the last byte left, arrival - latency (the channel is free then). */
  SENT_PS: 5,
  WIDTH: 6,
} as const;

export const CMD_SLOTS = 64;
/**
 * Bytes for a PE's last error (length-prefixed JSON). An error that does not
 * fit is shortened to a valid one (fitSerializedError in lib/errors.ts).
 */
export const ERROR_SLOT_BYTES = 8 * 1024;
/**
 * Bytes per actor in the report slot (the abort's report: a DeadlockError names
 * each waiter twice, in its message and in `waiters`, ~100-200 bytes a line),
 * so a deadlock of every actor fits whole. At least ERROR_SLOT_BYTES, at most
 * REPORT_SLOT_MAX_BYTES (a larger report is shortened like any error).
 */
export const REPORT_BYTES_PER_ACTOR = 512;
/** 1 MiB: ~2000 actors' worth; past that, nobody reads a deadlock report line by line. */
export const REPORT_SLOT_MAX_BYTES = 1024 * 1024;
export const CMD_SLOT_BYTES = 16 * 1024;
/** Per command slot: a publication sequence word (slot k holds command n when seq == n + 1). */

export interface LayoutDims {
  executors: number;
  pes: number;
  /** Host actors: one per rank (SIP) plus the main thread. */
  hosts: number;
  nSlots: number;
  /** Payload bytes per IPCQ slot (0 in timing-only mode: slots carry headers only). */
  slotSize: number;
  /** Allocation counters: (sip, cube) pairs for SRAM and HBM. */
  cubes: number;
  /** Host memory backing every tensor (0 in timing-only mode: nothing is backed, lib/shm/allocator.ts). */
  arenaBytes: number;
  /**
   * Channel sets: copies of every PE's four rings, one per process group in use
   * (ccl.channel_sets; default 1, the world's only). Each set's slots are a
   * buffer of their own, so a set costs address space, and memory only once used.
   */
  channelSets?: number;
  /**
   * Physical links (lib/topology/links.ts) that carry the optimistic fast path's overlap
   * check (timing.link_sharing: max_min; 0 otherwise): a lock word in `ctl` and the
   * bandwidth-phase intervals recorded on it in `times` (LINK_SPAN words a link;
   * lib/ipcq/link-overlap.ts).
   */
  links?: number;
}

/** Word and byte offsets of one session's buffers, derived from its dimensions. */
export class ShmLayout {
  readonly ctlWords: number;
  readonly timesWords: number;
  /** Bytes of one channel set's slots (every set's buffer has this size). */
  readonly ipcqSetBytes: number;
  readonly cmdBytes: number;
  /** Bytes per slot in a set's header region: its header and up to inlineBytes of payload. */
  readonly slotStride: number;
  /** Payload bytes a slot holds beside its header (INLINE_PAYLOAD_BYTES, or slot_size if smaller). */
  readonly inlineBytes: number;
  /** Bytes per slot in a set's payload region (0: every message fits inline). */
  readonly payloadStride: number;
  /** Byte offset of a set's payload region in its buffer (after every slot's header). */
  readonly payloadBase: number;
  /** Rings of every channel set. */
  readonly rings: number;
  readonly channelSets: number;
  /** Rings of one channel set: a ring's id is set * ringsPerSet + ringId(sender PE, direction). */
  readonly ringsPerSet: number;
  readonly actors: number;
  readonly reportSlotBytes: number;

  private readonly execBase: number;
  private readonly cmdSeqBase: number;
  private readonly actorBase: number;
  private readonly peBase: number;
  private readonly ringBase: number;
  private readonly allocBase: number;
  private readonly activeBase: number;
  private readonly linkLockBase: number;
  // times
  private readonly clockBase: number;
  private readonly recordBase: number;
  private readonly barrierBase: number;
  private readonly grantBase: number;
  private readonly channelFreeBase: number;
  private readonly flowBase: number;
  private readonly linkIntervalBase: number;
  /** `times` index: a lower bound on the virtual time the link arbiter can still wake anyone at (lib/coordinator/link-arbiter.ts). */
  readonly linkBound: number;

  constructor(readonly dims: LayoutDims) {
    this.channelSets = dims.channelSets ?? 1;
    this.ringsPerSet = dims.pes * DIR_COUNT;
    this.rings = this.ringsPerSet * this.channelSets;
    this.actors = dims.pes * ACTORS_PER_PE + dims.hosts;
    let w = HEADER_WORDS;
    this.execBase = w;
    w += (dims.executors + 1) * EXEC_STRIDE;
    this.cmdSeqBase = w;
    w += (dims.executors + 1) * CMD_SLOTS;
    this.actorBase = w;
    w += this.actors * ACTOR_STRIDE;
    this.peBase = w;
    w += dims.pes * PE_STRIDE;
    w = Math.ceil(w / RING_STRIDE) * RING_STRIDE;
    this.ringBase = w;
    w += this.rings * RING_STRIDE;
    this.allocBase = w;
    w += dims.cubes * 2;
    this.activeBase = w;
    w += Math.ceil(this.actors / 32);
    this.linkLockBase = w;
    w += dims.links ?? 0;
    this.ctlWords = w;

    let f = 0;
    this.clockBase = f;
    f += this.actors;
    this.recordBase = f;
    f += dims.pes * RECORD_CAPACITY * RECORD.WIDTH;
    this.barrierBase = f;
    f += 2 * dims.hosts;
    this.grantBase = f;
    f += dims.pes * GRANT.WIDTH;
    this.channelFreeBase = f;
    f += dims.cubes * 2;
    this.flowBase = f;
    f += dims.pes * DIR_COUNT * FLOW.WIDTH;
    this.linkBound = f;
    f += 1;
    this.linkIntervalBase = f;
    f += (dims.links ?? 0) * LINK_SPAN;
    this.timesWords = f;

    // A set's buffer: every slot's header (and inline payload) first, then every slot's
    // payload area. Whole cache lines per slot in both, so a sender filling slot k+1
    // never shares a line with a receiver reading slot k. A slot whose messages all fit
    // inline (slot_size <= INLINE_PAYLOAD_BYTES; 0 in timing-only mode) has no payload area.
    this.inlineBytes = Math.min(INLINE_PAYLOAD_BYTES, dims.slotSize);
    this.slotStride = Math.ceil((SLOT.HEADER_BYTES + this.inlineBytes) / 64) * 64;
    this.payloadStride = dims.slotSize > this.inlineBytes ? Math.ceil(dims.slotSize / 64) * 64 : 0;
    this.payloadBase = this.ringsPerSet * dims.nSlots * this.slotStride;
    this.ipcqSetBytes = this.payloadBase + this.ringsPerSet * dims.nSlots * this.payloadStride;
    this.reportSlotBytes = Math.min(REPORT_SLOT_MAX_BYTES, Math.max(ERROR_SLOT_BYTES, this.actors * REPORT_BYTES_PER_ACTOR));
    this.cmdBytes = (dims.executors + 1) * CMD_SLOTS * CMD_SLOT_BYTES + this.reportSlotBytes + dims.pes * ERROR_SLOT_BYTES;
  }

  /** Byte offset in `cmd` of a PE's last kernel error (JSON), or of the abort's report (pe = -1): the report first, then one slot per PE. */
  errorOffset(pe: number): number {
    const base = (this.dims.executors + 1) * CMD_SLOTS * CMD_SLOT_BYTES;
    return pe < 0 ? base : base + this.reportSlotBytes + pe * ERROR_SLOT_BYTES;
  }

  /** Capacity in bytes (length prefix included) of a PE's error slot, or of the report slot (pe = -1). */
  errorSlotBytes(pe: number): number {
    return pe < 0 ? this.reportSlotBytes : ERROR_SLOT_BYTES;
  }

  /** Executor index of the main thread. */
  get mainExecutor(): number {
    return this.dims.executors;
  }

  exec(executor: number, field: number): number {
    return this.execBase + executor * EXEC_STRIDE + field;
  }
  cmdSeq(executor: number, slot: number): number {
    return this.cmdSeqBase + executor * CMD_SLOTS + slot;
  }
  cmdPayloadOffset(executor: number, slot: number): number {
    return (executor * CMD_SLOTS + slot) * CMD_SLOT_BYTES;
  }
  actor(actor: number, field: number): number {
    return this.actorBase + actor * ACTOR_STRIDE + field;
  }
  /** Actor id of a PE's kernel task. */
  peActor(pe: number): number {
    return pe * ACTORS_PER_PE;
  }
  /** Actor id of a PE's DMA channel (0..3 outbound by direction, 4..7 inbound). */
  channelActor(pe: number, channel: number): number {
    return pe * ACTORS_PER_PE + 1 + channel;
  }
  /** Actor id of branch `branch` of a `tl.parallel` on a PE (0..MAX_BRANCHES-1). */
  branchActor(pe: number, branch: number): number {
    return pe * ACTORS_PER_PE + 1 + 2 * 4 + branch;
  }
  /** Actor id of a host: hosts follow the PEs; host `dims.hosts - 1` is the main thread. */
  hostActor(host: number): number {
    return this.dims.pes * ACTORS_PER_PE + host;
  }
  get mainHost(): number {
    return this.dims.hosts - 1;
  }
  pe(pe: number, field: number): number {
    return this.peBase + pe * PE_STRIDE + field;
  }
  ring(ring: number, field: number): number {
    return this.ringBase + ring * RING_STRIDE + field;
  }
  /**
   * The word of the active-actor bitmap holding actor `actor`'s bit (1 << actor % 32): set while
   * the actor is RUNNING or BLOCKED, clear while IDLE or DONE, so the arbiter reads the few
   * active actors instead of every actor (lib/coordinator/arbiter.ts).
   */
  activeWord(actor: number): number {
    return this.activeBase + (actor >>> 5);
  }
  /** Words of the active-actor bitmap (activeWord(0) is the first). */
  get activeWords(): number {
    return Math.ceil(this.actors / 32);
  }
  /** Allocation top of a cube's SRAM (space 0) or HBM (space 1), in 64-byte units (lib/shm/allocator.ts). */
  allocTop(cubeGlobal: number, space: 0 | 1): number {
    return this.allocBase + cubeGlobal * 2 + space;
  }
  /**
   * Byte offset of the header of message `seq`'s slot of ring `ring` in its channel set's
   * buffer (setOfRing); a payload of up to inlineBytes follows it. Headers are
   * direction-major (every PE's east ring, then every west ring, ...): a collective that
   * sends one way touches the pages of that direction's headers only.
   */
  slotOffset(ring: number, seq: number): number {
    const r = ring % this.ringsPerSet;
    const byDirection = (r % DIR_COUNT) * this.dims.pes + Math.floor(r / DIR_COUNT);
    return (byDirection * this.dims.nSlots + (seq % this.dims.nSlots)) * this.slotStride;
  }
  /** Byte offset of the payload area of message `seq`'s slot of ring `ring` (for messages of more than inlineBytes). */
  payloadOffset(ring: number, seq: number): number {
    return this.payloadBase + ((ring % this.ringsPerSet) * this.dims.nSlots + (seq % this.dims.nSlots)) * this.payloadStride;
  }
  /** The ring of channel set `set` on which `senderPe` sends in direction `dir`. */
  ringOf(senderPe: number, dir: number, set: number): number {
    return set * this.ringsPerSet + ringId(senderPe, dir);
  }
  /** The channel set of ring `ring`. */
  setOfRing(ring: number): number {
    return Math.floor(ring / this.ringsPerSet);
  }
  /** The sending PE of ring `ring`. */
  senderOfRing(ring: number): number {
    return Math.floor((ring % this.ringsPerSet) / DIR_COUNT);
  }

  // times (Float64Array indices)
  clock(actor: number): number {
    return this.clockBase + actor;
  }
  /**
   * A PE's record of its kernel `seq`. Rows are sequence-major (every PE's row k together):
   * a run of one kernel per PE writes 32 bytes a PE, not a page a PE (4 MiB of `times`
   * at p = 1024 with PE-major rows of RECORD_CAPACITY each; decision 0034).
   */
  record(pe: number, seq: number, field: number): number {
    return this.recordBase + ((seq % RECORD_CAPACITY) * this.dims.pes + pe) * RECORD.WIDTH + field;
  }
  grant(pe: number, field: number): number {
    return this.grantBase + pe * GRANT.WIDTH + field;
  }
  /** Virtual time a cube's SRAM (space 0) or HBM (space 1) channel is next free (written under HEADER.ARBITER_LOCK). */
  channelFree(cubeGlobal: number, space: 0 | 1): number {
    return this.channelFreeBase + cubeGlobal * 2 + space;
  }
  /** `ctl` index of link `id`'s lock word (the optimistic fast path's overlap check). */
  linkLock(id: number): number {
    return this.linkLockBase + id;
  }

  /** `times` index of link `id`'s recorded bandwidth-phase intervals (LINK_SPAN words: a count, then join and end pairs; the optimistic fast path). */
  linkIntervals(id: number): number {
    return this.linkIntervalBase + id * LINK_SPAN;
  }

  /** PE `pe`'s link-flow request on its outbound channel `dir` (FLOW fields). */
  flow(pe: number, dir: number, field: number): number {
    return this.flowBase + (pe * DIR_COUNT + dir) * FLOW.WIDTH + field;
  }
  barrierTime(round: number, host: number): number {
    return this.barrierBase + (round % 2) * this.dims.hosts + host;
  }
}

/** The ring of channel set 0 (the world's) on which `senderPe` sends in direction `dir`; ShmLayout.ringOf for any set. */
export function ringId(senderPe: number, dir: number): number {
  return senderPe * DIR_COUNT + dir;
}

export function dirIndex(d: Direction): number {
  return DIRECTIONS.indexOf(d);
}

export function oppositeDir(d: number): number {
  return d ^ 1; // east<->west, north<->south
}

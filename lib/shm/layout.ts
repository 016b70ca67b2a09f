// Runs on: any thread. Owns: the layout of every SharedArrayBuffer of a session,
// declared once: where each region starts and how large each buffer is for a
// session's dimensions (ShmLayout). Call sites ask this module for a word index
// by name; nobody writes `ctl[3]`. What each word of a region means is
// ./layout-words.ts's, how a ring is named ./layout-rings.ts's; this module
// re-exports both, so importers name one module.
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

import {
  ACTORS_PER_PE, ACTOR_STRIDE, CMD_SLOTS, CMD_SLOTS_MIN, CMD_SLOTS_TOTAL, CMD_SLOT_BYTES, ERROR_SLOT_BYTES, EXEC_STRIDE, FLOW, GRANT, HEADER_WORDS, INLINE_PAYLOAD_BYTES, KERNEL_NAME_BYTES,
  LINE_WORDS, PE_STRIDE, RECORD, RECORD_CAPACITY, REPORT_BYTES_PER_ACTOR, REPORT_SLOT_MAX_BYTES, RINGS_PER_LINE, RING_WORDS, SLOT,
} from './layout-words.js';
import { DIR_COUNT, ringId } from './layout-rings.js';

export * from './layout-words.js';
export * from './layout-rings.js';

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
   * Physical links (lib/topology/links.ts) that carry claims (timing.link_sharing: max_min;
   * 0 otherwise): two `ctl` words a link, the count of claims and the claiming channel
   * when it is the only one (lib/sync/link-claims.ts).
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
  /**
   * Command slots per executor (main's included): CMD_SLOTS up to 64 threads, then a share of
   * CMD_SLOTS_TOTAL (at least CMD_SLOTS_MIN), so the command region grows by CMD_SLOTS_MIN
   * slots a thread, not 64 (decision 0125).
   */
  readonly cmdSlots: number;
  /** Bytes per slot in a set's header region: its header and up to inlineBytes of payload. */
  readonly slotStride: number;
  /** Bytes from a ring's slot j to its slot j + 1 in the header region (slot-major: every PE's slot j of a direction together). */
  readonly slotStep: number;
  /**
   * The same direction's rings of consecutive PEs share cache lines, their ring words and
   * (with no payload inline) their slot headers: while a session has at least RINGS_PER_LINE
   * PEs a thread, so that a line's PEs are mostly one thread's (decision 0185).
   */
  readonly packed: boolean;
  /** `ctl` words from one ring's words to the next's in a direction (RING_WORDS packed, else a line). */
  private readonly ringStride: number;
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
  private readonly activeSummaryBase: number;
  private readonly epochSummaryBase: number;
  private readonly linkClaimBase: number;
  private readonly flowReqBase: number;
  private readonly flowReqSummaryBase: number;
  // times
  private readonly clockBase: number;
  private readonly recordBase: number;
  private readonly barrierBase: number;
  private readonly grantBase: number;
  private readonly channelFreeBase: number;
  private readonly flowBase: number;
  private readonly floorBase: number;
  /** `times` index: a lower bound on the virtual time the link arbiter can still wake anyone at (lib/coordinator/link-arbiter.ts). */
  readonly linkBound: number;
  /** `times` index: the highest launch horizon found so far, a lower bound on the virtual time of any launch not yet committed (lib/sync/link-claims.ts). */
  readonly horizon: number;

  constructor(readonly dims: LayoutDims) {
    this.channelSets = dims.channelSets ?? 1;
    this.ringsPerSet = dims.pes * DIR_COUNT;
    this.rings = this.ringsPerSet * this.channelSets;
    this.actors = dims.pes * ACTORS_PER_PE + dims.hosts;
    this.cmdSlots = Math.max(CMD_SLOTS_MIN, Math.min(CMD_SLOTS, Math.floor(CMD_SLOTS_TOTAL / (dims.executors + 1))));
    this.packed = dims.pes >= RINGS_PER_LINE * dims.executors;
    this.ringStride = this.packed ? RING_WORDS : LINE_WORDS;
    let w = HEADER_WORDS;
    this.execBase = w;
    w += (dims.executors + 1) * EXEC_STRIDE;
    this.cmdSeqBase = w;
    w += (dims.executors + 1) * this.cmdSlots;
    this.actorBase = w;
    w += this.actors * ACTOR_STRIDE;
    this.peBase = w;
    w += dims.pes * PE_STRIDE;
    w = Math.ceil(w / LINE_WORDS) * LINE_WORDS;
    this.ringBase = w;
    w += this.rings * this.ringStride;
    this.allocBase = w;
    w += dims.cubes * 2;
    this.activeBase = w;
    w += Math.ceil(this.actors / 32);
    this.activeSummaryBase = w;
    w += Math.ceil(Math.ceil(this.actors / 32) / 32);
    this.epochSummaryBase = w;
    w += Math.ceil((dims.executors + 1) / 32);
    this.linkClaimBase = w;
    w += 2 * (dims.links ?? 0);
    this.flowReqBase = w;
    w += this.flowReqWords;
    this.flowReqSummaryBase = w;
    w += this.flowReqSummaryWords;
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
    f = Math.ceil(f / 8) * 8; // a 64-byte line: a PE's four arrivals share one (flow)
    this.flowBase = f;
    f += dims.pes * DIR_COUNT * FLOW.WIDTH;
    this.floorBase = f;
    f += dims.pes;
    this.linkBound = f;
    f += 1;
    this.horizon = f;
    f += 1;
    this.timesWords = f;

    // A set's buffer: every slot's header (and inline payload) first, then every slot's
    // payload area. Whole cache lines per slot in both, so a sender filling slot k+1
    // never shares a line with a receiver reading slot k; but a packed session's bare
    // headers (no payload inline: timing-only mode) take SLOT.HEADER_BYTES, two PEs'
    // slot j in a line. A slot whose messages all fit inline (slot_size <=
    // INLINE_PAYLOAD_BYTES; 0 in timing-only mode) has no payload area.
    this.inlineBytes = Math.min(INLINE_PAYLOAD_BYTES, dims.slotSize);
    this.slotStride = this.packed && this.inlineBytes === 0 ? SLOT.HEADER_BYTES : Math.ceil((SLOT.HEADER_BYTES + this.inlineBytes) / 64) * 64;
    this.slotStep = dims.pes * this.slotStride;
    this.payloadStride = dims.slotSize > this.inlineBytes ? Math.ceil(dims.slotSize / 64) * 64 : 0;
    this.payloadBase = this.ringsPerSet * dims.nSlots * this.slotStride;
    this.ipcqSetBytes = this.payloadBase + this.ringsPerSet * dims.nSlots * this.payloadStride;
    this.reportSlotBytes = Math.min(REPORT_SLOT_MAX_BYTES, Math.max(ERROR_SLOT_BYTES, this.actors * REPORT_BYTES_PER_ACTOR));
    this.cmdBytes = (dims.executors + 1) * this.cmdSlots * CMD_SLOT_BYTES + this.reportSlotBytes + dims.pes * (ERROR_SLOT_BYTES + KERNEL_NAME_BYTES);
  }

  /** Byte offset in `cmd` of a PE's last kernel error (JSON), or of the abort's report (pe = -1): the report first, then one slot per PE. */
  errorOffset(pe: number): number {
    const base = (this.dims.executors + 1) * this.cmdSlots * CMD_SLOT_BYTES;
    return pe < 0 ? base : base + this.reportSlotBytes + pe * ERROR_SLOT_BYTES;
  }

  /** Byte offset in `cmd` of the name of the kernel PE `pe` runs (KERNEL_NAME_BYTES, after every error slot). */
  kernelNameOffset(pe: number): number {
    return this.errorOffset(this.dims.pes) + pe * KERNEL_NAME_BYTES;
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
    return this.cmdSeqBase + executor * this.cmdSlots + slot;
  }
  cmdPayloadOffset(executor: number, slot: number): number {
    return (executor * this.cmdSlots + slot) * CMD_SLOT_BYTES;
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
  /** `ctl` index of ring `ring`'s word `field` (RING): a set's rings direction by direction, PE by PE in each. */
  ring(ring: number, field: number): number {
    const set = Math.floor(ring / this.ringsPerSet);
    const r = ring - set * this.ringsPerSet;
    return this.ringBase + (set * this.ringsPerSet + (r % DIR_COUNT) * this.dims.pes + Math.floor(r / DIR_COUNT)) * this.ringStride + field;
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
  /** The word of the bitmap's summary holding bitmap word `wi`'s bit (1 << wi % 32): ../shm/active-actors.ts. */
  activeSummaryWord(wi: number): number {
    return this.activeSummaryBase + (wi >>> 5);
  }
  /** Words of the bitmap's summary (activeSummaryWord(0) is the first). */
  get activeSummaryWords(): number {
    return Math.ceil(this.activeWords / 32);
  }
  /** The word holding thread `e`'s bit (1 << e % 32) among the threads whose EXEC.STATE_EPOCH has moved: ./shared-state.ts stateEpoch. */
  epochSummaryWord(e: number): number {
    return this.epochSummaryBase + (e >>> 5);
  }
  /** Words of the epochs' summary (epochSummaryWord(0) is the first): a bit for each executor and main. */
  get epochSummaryWords(): number {
    return Math.ceil((this.dims.executors + 1) / 32);
  }
  /** Allocation top of a cube's SRAM (space 0) or HBM (space 1), in 64-byte units (lib/shm/allocator.ts). */
  allocTop(cubeGlobal: number, space: 0 | 1): number {
    return this.allocBase + cubeGlobal * 2 + space;
  }
  /**
   * Byte offset of the header of message `seq`'s slot of ring `ring` in its channel set's
   * buffer (setOfRing); a payload of up to inlineBytes follows it. Headers are
   * direction-major (every PE's east ring, then every west ring, ...): a collective that
   * sends one way touches the pages of that direction's headers only. In a direction they
   * are slot-major (every PE's slot 0, then every slot 1, ...): the rings of a collective's
   * step are at the same sequence number, so its messages lie together (slotStep apart
   * on one ring).
   */
  slotOffset(ring: number, seq: number): number {
    const r = ring % this.ringsPerSet;
    const { pes, nSlots } = this.dims;
    return (((r % DIR_COUNT) * nSlots + (seq % nSlots)) * pes + Math.floor(r / DIR_COUNT)) * this.slotStride;
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
  /** `ctl` index of link `id`'s claim count; the next word holds the claiming channel (pe * 4 + dir + 1) when the count is 1 (lib/sync/link-claims.ts). */
  linkClaims(id: number): number {
    return this.linkClaimBase + 2 * id;
  }
  /**
   * The word of the flow-request bitmap holding outbound channel `c`'s bit (c = pe * 4 + dir,
   * 1 << c % 32): set by the channel after it bumps PE.FLOW_REQ, taken by the link arbiter,
   * which reads only the channels whose bits it took (../shm/flow-requests.ts).
   */
  flowReqWord(c: number): number {
    return this.flowReqBase + (c >>> 5);
  }
  /** Words of the flow-request bitmap: a bit for each outbound channel. */
  get flowReqWords(): number {
    return Math.ceil((this.dims.pes * DIR_COUNT) / 32);
  }
  /** The word of that bitmap's summary holding bitmap word `wi`'s bit (1 << wi % 32). */
  flowReqSummaryWord(wi: number): number {
    return this.flowReqSummaryBase + (wi >>> 5);
  }
  /** Words of the flow-request bitmap's summary. */
  get flowReqSummaryWords(): number {
    return Math.ceil(this.flowReqWords / 32);
  }

  /**
   * PE `pe`'s link-flow request on its outbound channel `dir` (FLOW fields). A PE's
   * block is field-major: a field's four directions are adjacent, so the floor a piece's
   * check reads of each PE near its links (its four arrivals, lib/sync/link-reach.ts
   * peFloor) is one cache line, not four (decision 0236).
   */
  flow(pe: number, dir: number, field: number): number {
    return this.flowBase + (pe * FLOW.WIDTH + field) * DIR_COUNT + dir;
  }
  /**
   * PE `pe`'s floor while its kernel is active (its clock and its sends' arrivals alone,
   * lib/sync/pe-floor.ts), -Infinity while it has none: one dense word a PE, so a check
   * that reads the floors of many PEs reads a line for eight of them (decision 0251).
   */
  floor(pe: number): number {
    return this.floorBase + pe;
  }
  barrierTime(round: number, host: number): number {
    return this.barrierBase + (round % 2) * this.dims.hosts + host;
  }
}

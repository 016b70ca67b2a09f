// Runs on: any thread. Owns: the word maps of a session's shared buffers —
// what each word (or byte) of a region means: the ctl header, the per-executor,
// per-actor, per-PE and per-ring words, the IPCQ slot header, and the per-PE
// blocks of `times` (records, grants, link flows) — with each region's stride
// and the fixed sizes of the cmd buffer's slots. A word is added or its meaning
// changes here; where a region starts for a session's dimensions is
// ./layout.ts's (ShmLayout), which re-exports this module.
//
// Every counter in ctl only goes up (head, tail, generation, doorbell); a
// waiter waits for `ctl[word] >= target` (see ./layout.ts).

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
   * While it is non-zero, an actor that stops running rings the coordinator (at once, or
   * as its thread's turn ends: lib/sync/wake.ts TurnEndRing): it may have been the last
   * one that could still ask earlier than a pending request.
   */
  GRANTS_PENDING: 16,
  /** Non-zero while a thread runs an arbiter pass (a lock: the channels' free times and GRANT_SEQ change only under it); 2: the coordinator waits for it. */
  ARBITER_LOCK: 17,
  /** 1 while the coordinator is parked on COORD_DOORBELL; a ringer notifies only then. */
  COORD_PARKED: 18,
  /** Unused since decision 0126 (each thread's EXEC.STATE_EPOCH). */
  UNUSED_19: 19,
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
  /**
   * Pieces held at their channel (timing.link_sharing: max_min): alone on their links by
   * the claims, waiting for the launch horizon to pass their end (lib/sync/link-claims.ts).
   * While it is non-zero an actor that stops running rings the coordinator, as for GRANTS_PENDING.
   */
  HELD_PENDING: 22,
  /**
   * Kernels that have begun claiming their links, and those done (lib/sync/link-claims.ts
   * claimLinks: the first bumped before its adds, the second after). Equal when no claim is
   * on its way; an unchanged first means no kernel has begun claiming since (ClaimsSeen).
   * A line of their own: every piece of a shared link reads the first, and only a kernel
   * that starts writes them.
   */
  CLAIMS_BEGUN: 32,
  CLAIMS_DONE: 33,
} as const;
/** Three cache lines: the arbiter's words (16..) stay off the line barrier arrivals write (word 4), and the claims' (32..) off both. */
export const HEADER_WORDS = 48;

/**
 * Why a session aborted. Claimed once with compareExchange from NONE, so the
 * first aborter also owns the report slot (errorOffset(-1)): it writes the
 * report before it bumps ABORT. DEADLOCK's report is the DeadlockError; FAULT's
 * is the error that escaped on an executor thread (lib/executor/faults.ts).
 * STOPPED: a PE passed the virtual-time limit; the report slot holds the RunStoppedError
 * (lib/pe/pe-runtime.ts).
 */
export const ABORT_KIND = { NONE: 0, RANK_FAILED: 1, DEADLOCK: 2, FAULT: 3, STOPPED: 5 } as const;

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
  /** Atomics.notify calls on this thread's doorbell from Scheduler.ring (it was parked): a count, never waited on. */
  NOTIFIES: 4,
  /** Written as the thread's scheduler stops: its publishes to a waiter on another thread (each rang that thread). */
  PUBLISHES_REMOTE: 5,
  /** Written as the thread's scheduler stops: its publishes to a waiter on this thread (no synchronisation). */
  PUBLISHES_LOCAL: 6,
  /**
   * Bumped by this thread before every state store of an actor it runs (the actor's GEN after it).
   * The sum over every thread (stateEpoch, lib/coordinator/snapshot.ts) equal before and after
   * a scan means no actor changed state during it; one word a thread, in its own line, so that
   * threads do not contend for one word on every state change (decision 0126).
   */
  STATE_EPOCH: 7,
} as const;
export const EXEC_STRIDE = 16; // one cache line per thread

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
export const ACTOR_STRIDE = 8;

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
  /**
   * Per outbound channel (4 words): its piece held for the launch horizon
   * (lib/sync/link-claims.ts): 0 none, 1 held, 2 released to go alone, 3 handed to the link arbiter.
   */
  HOLD: 24,
} as const;
export const PE_STRIDE = 28;

/**
 * Per IPCQ ring, RING_WORDS words. A step of a collective moves one message on the
 * same direction's ring of every PE, so the rings of one direction lie PE by PE and
 * RINGS_PER_LINE of them share a 64-byte line (ShmLayout.ring; decision 0185), unless
 * the session has fewer PEs a thread than that: then a ring has a line of its own.
 */
export const RING = {
  /** Messages published by the sender (monotonic). */
  TAIL: 0,
  /** The tail the receiver is waiting for (monotonic). The sender wakes another thread only when it reaches it. */
  DATA_WANT: 1,
  /** Messages consumed by the receiver (monotonic); head - tail is the occupancy. */
  HEAD: 2,
  /** The head the sender is waiting for (a credit; monotonic). The receiver wakes another thread only for it. */
  CREDIT_WANT: 3,
} as const;
export const RING_WORDS = 4;
/** Words of a 64-byte cache line in `ctl`. */
export const LINE_WORDS = 16;
/** Rings that share a line when packed: the same direction's rings of consecutive PEs. */
export const RINGS_PER_LINE = LINE_WORDS / RING_WORDS;


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
  /** A held piece (PE.HOLD): the end of its bandwidth phase alone. */
  END_PS: 6,
  /** A piece's arrival alone, the latest of its channel's: its kernel ends no earlier (the PE's send floor, lib/sync/link-claims.ts). */
  ARRIVAL_PS: 7,
  WIDTH: 8,
} as const;

/**
 * Command slots of an executor while a session has few threads (ShmLayout.cmdSlots), CMD_SLOT_BYTES
 * each in `cmd`; each has a publication sequence word in ctl (slot k holds command n when seq == n + 1).
 */
export const CMD_SLOTS = 64;
/**
 * Command slots of every thread together, once threads are many (ShmLayout.cmdSlots): a
 * thread per rank at p = 4096 held 64 slots of 16 KiB a thread, 4 GiB in one buffer
 * (decision 0125). A full queue only makes its producer wait.
 */
export const CMD_SLOTS_TOTAL = 64 * 64;
/** The fewest command slots an executor has, whatever the thread count. */
export const CMD_SLOTS_MIN = 4;
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
/** Bytes per PE for the name of the kernel it runs (length-prefixed UTF-8), published at kernel start for a stopped run's report. */
export const KERNEL_NAME_BYTES = 128;

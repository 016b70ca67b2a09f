// Runs on: any thread that hosts actors (a requester runs a pass for its own
// request) and the coordinator thread (a pass whenever its doorbell rings).
// Pure logic over shared views, tested without threads. Owns: the shared
// memory channels — each cube's SRAM and HBM — and the order in which PEs'
// accesses are served (docs/decisions/0024-arbitration-by-lower-bounds.md);
// and, by the same rule, when a shared PE may run its next ordered launch
// (lib/pe/admission.ts, decision 0090).
//
// A PE that accesses a cube's SRAM or HBM publishes a request (virtual time,
// bytes, space, cube) in its GRANT block and bumps REQ_SEQ. Requests are served
// in (virtual time, PE) order: a channel serves one access at a time,
//   start = max(request time, channel free);  channel free = start + bytes / bandwidth
//   done  = start + latency + bytes / bandwidth
// The earliest pending requests (time t) may be granted as soon as no actor can
// still ask at a time <= t: no actor's lower bound (./snapshot.ts) is <= t. A
// granted requester's bound is its done time (written to its clock word), so
// one pass can grant a run of requests.
//
// The grants are the ones the old rule (grant the earliest at each quiescent
// state) makes: when a pass grants the requests at t, every request at <= t
// that can exist without a grant exists already, which is what quiescence
// guaranteed. So the grants, and everything after them, are a deterministic
// function of the program (docs/determinism.md), whichever thread runs the pass.
// Nothing polls: a pass runs when a request is published (by the requester)
// and whenever an actor stops running while requests are pending (it rings the
// coordinator: lib/sync/scheduler.ts).
import { GRANT, GRANT_LAUNCH, HEADER, PE } from '../shm/layout.js';
import { actorsBound, commandInFlight } from './snapshot.js';
import { stateEpoch, type SharedState } from '../shm/shared-state.js';
import type { Machine } from '../topology/machine.js';
import { latencyPs, transferPs } from '../time/virtual-time.js';
import { publishClock } from '../sync/pe-floor.js';

/** Snapshot attempts before a pass gives up (actors kept changing state; a later ring retries). */
const SNAPSHOT_TRIES = 3;

/** SRAM's and HBM's access latency (ps) and bandwidth (GB/s), indexed by GRANT.SPACE. */
export interface MemoryTiming {
  latencyPs: [number, number];
  bandwidth: [number, number];
}

export function memoryTiming(m: Machine): MemoryTiming {
  const mem = m.topology.timing.memory;
  return { latencyPs: [latencyPs(mem.sram.latency_ns), latencyPs(mem.hbm.latency_ns)], bandwidth: [mem.sram.bandwidth_gb_s, mem.hbm.bandwidth_gb_s] };
}

/**
 * The earliest time PE `pe`'s pending request can complete: its own time plus the
 * access alone on a free channel (a launch's admission: its own time). The PE does
 * nothing before it, so the link arbiter bounds it there (./link-arbiter.ts): flows
 * whose sender resumes before this request are made final, and their senders'
 * accesses served, before it is granted (docs/decisions/0204).
 */
export function earliestDonePs(sh: SharedState, timing: MemoryTiming, pe: number): number {
  const L = sh.layout;
  const t = sh.times;
  const at = t[L.grant(pe, GRANT.AT_PS)];
  const space = t[L.grant(pe, GRANT.SPACE)];
  if (space === GRANT_LAUNCH) return at;
  const ch = space as 0 | 1;
  return at + timing.latencyPs[ch] + transferPs(t[L.grant(pe, GRANT.BYTES)], timing.bandwidth[ch]);
}

/** One arbiter per session and thread (its snapshot array is as long as the session's actors). */
const perSession = new WeakMap<SharedState, Arbiter>();

export class Arbiter {
  /** This thread's arbiter for the session of `sh`. */
  static of(sh: SharedState, m: Machine): Arbiter {
    let a = perSession.get(sh);
    if (!a) {
      a = new Arbiter(sh, m);
      perSession.set(sh, a);
    }
    return a;
  }

  private readonly latencyPs: [number, number];
  private readonly bandwidth: [number, number];

  constructor(
    private readonly sh: SharedState,
    m: Machine,
  ) {
    ({ latencyPs: this.latencyPs, bandwidth: this.bandwidth } = memoryTiming(m));
  }

  /** Take the lock if it is free (executor threads never wait for it). */
  tryLock(): boolean {
    return Atomics.compareExchange(this.sh.ctl, HEADER.ARBITER_LOCK, 0, 1) === 0;
  }

  /** Take the lock, waiting for it (the coordinator thread may block; it marks the lock 2, "waited for"). */
  lock(): void {
    const ctl = this.sh.ctl;
    if (Atomics.compareExchange(ctl, HEADER.ARBITER_LOCK, 0, 1) === 0) return;
    while (Atomics.exchange(ctl, HEADER.ARBITER_LOCK, 2) !== 0) Atomics.wait(ctl, HEADER.ARBITER_LOCK, 2);
  }

  /** Release the lock; notify only when the coordinator waits for it. */
  unlock(): void {
    if (Atomics.exchange(this.sh.ctl, HEADER.ARBITER_LOCK, 0) === 2) Atomics.notify(this.sh.ctl, HEADER.ARBITER_LOCK);
  }

  /**
   * Grant what can be granted now (hold the lock). `self` is the actor running
   * this pass for its own request (kernel actor of PE `selfPe`; its clock word is
   * stale: it asks nothing more until served, then nothing before its done time),
   * or -1. Returns the PEs granted, in order.
   */
  pass(self = -1, selfPe = -1): number[] {
    const L = this.sh.layout;
    const ctl = this.sh.ctl;
    const granted: number[] = [];
    // The requester running this pass does nothing more until its request is served,
    // and then nothing before its done time.
    let selfBound = Infinity;
    if (selfPe >= 0 && Atomics.load(ctl, L.pe(selfPe, PE.REQ_SEQ)) <= Atomics.load(ctl, L.pe(selfPe, PE.GRANT_SEQ))) selfBound = this.sh.times[L.grant(selfPe, GRANT.DONE_PS)];
    for (;;) {
      const due = this.earliestSafe(self, selfBound, selfPe);
      if (due === null) return granted;
      for (const pe of due) {
        const done = this.grant(pe);
        if (pe === selfPe) selfBound = done;
        granted.push(pe);
      }
    }
  }

  /** Serve PE `pe`'s pending request on its channel (an admission: at its own time); returns its done time. */
  private grant(pe: number): number {
    const { sh } = this;
    const L = sh.layout;
    const t = sh.times;
    const space = t[L.grant(pe, GRANT.SPACE)];
    let done = t[L.grant(pe, GRANT.AT_PS)];
    // A launch's admission (lib/pe/admission.ts) uses no channel: it is granted at its own time.
    if (space !== GRANT_LAUNCH) {
      const ch = space as 0 | 1;
      const free = L.channelFree(t[L.grant(pe, GRANT.CUBE)], ch);
      const busy = transferPs(t[L.grant(pe, GRANT.BYTES)], this.bandwidth[ch]);
      const start = Math.max(done, t[free]);
      done = start + this.latencyPs[ch] + busy;
      t[free] = start + busy;
    }
    t[L.grant(pe, GRANT.DONE_PS)] = done;
    // Its bound from now on (it resumes at `done`); it rewrites the word itself when it next blocks.
    publishClock(sh, L.peActor(pe), done);
    Atomics.store(sh.ctl, L.pe(pe, PE.GRANT_SEQ), Atomics.load(sh.ctl, L.pe(pe, PE.REQ_SEQ)));
    Atomics.sub(sh.ctl, HEADER.GRANTS_PENDING, 1);
    return done;
  }

  /**
   * The pending requests at the earliest pending time t, in PE order, when a
   * consistent snapshot shows that no actor can still do anything at a virtual
   * time <= t; else null. The pending set is read inside the snapshot (between
   * the two reads of the epoch): a request published after it was read comes
   * from an actor that then blocks, which bumps the epoch, or that is still
   * RUNNING, whose bound (its clock) is at most its request's time.
   * `selfPe`'s request alone pending (GRANTS_PENDING 1 and its own not served)
   * needs no scan of the PEs: by the same argument it is the pending set.
   */
  private earliestSafe(self: number, selfBound: number, selfPe: number): number[] | null {
    const { sh } = this;
    const L = sh.layout;
    const ctl = sh.ctl;
    const times = sh.times;
    const peStride = L.pe(1, 0) - L.pe(0, 0);
    const req0 = L.pe(0, PE.REQ_SEQ);
    const grant0 = L.pe(0, PE.GRANT_SEQ);
    // Nothing pending (the usual end of a pass): no snapshot needed to say so.
    if (Atomics.load(ctl, HEADER.GRANTS_PENDING) === 0) return null;
    for (let attempt = 0; attempt < SNAPSHOT_TRIES; attempt++) {
      const epoch = stateEpoch(sh);
      if (commandInFlight(sh)) return null;
      let tPs = Infinity;
      const due: number[] = [];
      if (selfPe >= 0 && Atomics.load(ctl, HEADER.GRANTS_PENDING) === 1 && Atomics.load(ctl, req0 + selfPe * peStride) > Atomics.load(ctl, grant0 + selfPe * peStride)) {
        tPs = times[L.grant(selfPe, GRANT.AT_PS)];
        due.push(selfPe);
      } else {
        for (let pe = 0, w = 0; pe < L.dims.pes; pe++, w += peStride) {
          if (Atomics.load(ctl, req0 + w) <= Atomics.load(ctl, grant0 + w)) continue;
          const at = times[L.grant(pe, GRANT.AT_PS)];
          if (at < tPs) {
            tPs = at;
            due.length = 0;
          }
          if (at === tPs) due.push(pe);
        }
      }
      if (due.length === 0) return null;
      if (selfBound <= tPs) return null;
      // Senders waiting for a link flow (timing.link_sharing) resume no earlier than the link arbiter's bound.
      if (Atomics.load(ctl, HEADER.FLOWS_PENDING) > 0 && times[L.linkBound] <= tPs) return null;
      if (actorsBound(sh, self, tPs) <= tPs) return null;
      if (stateEpoch(sh) === epoch) return due;
    }
    return null;
  }
}

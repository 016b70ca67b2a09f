// Runs on: the coordinator thread (under the arbiter's lock, ./arbiter.ts), only
// when the topology sets timing.link_sharing: max_min. Owns: the fluid model of
// the session's link flows (./link-share.ts) and the order in which the pieces
// crossing shared links are made final
// (docs/decisions/0023-links-as-shared-resources.md, "Integration").
//
// An outbound DMA channel that sends a piece publishes a flow request in its
// FLOW block (start, route latency, join floor, its serialisation time alone,
// the receiving PE), bumps its FLOW_REQ word and HEADER.FLOWS_PENDING, and waits for FLOW_DONE.
// A pass:
//   1. takes a consistent snapshot (the arbiter's: one state epoch around the
//      reads) of the new requests and of every actor's lower bound B on the
//      virtual time of anything it will still do (RUNNING or blocked with a
//      true condition: its clock word; a PE waiting for a memory grant: its
//      access's earliest completion; blocked on a false condition, idle, done: none);
//   2. adds the new requests to the model, each a flow on Links.route(sender,
//      receiver) that pays the route's latency (hops * alpha) first, then
//      shares its links until its last byte arrives (SimGrid's CM02 order);
//   3. runs the model to min(B, the first instant a flow ends): the flows that
//      end then are final, and their channels are woken with SENT_PS =
//      arrival - latency (when the channel is free for its next piece).
// Why nothing added later can join before that instant: an actor bounded by B
// starts flows at or after B; a channel woken at arrival - latency sends its
// next piece on the same route (a kernel's port is fixed), which joins at or
// after that arrival; a kernel that waited for the send (woken at arrival -
// latency) gives its later pieces a join floor of that arrival (FLOW.JOIN_MIN_PS,
// lib/kernel/transfers.ts), and its end waits for its sends' arrival, so what the
// end wakes acts after it; the receiver is woken at the arrival. Alone, a piece
// costs exactly what the
// channel computes without sharing: its bytes are given as its serialisation
// time times the link bandwidth, so the model gives back that time.
import { DIR_COUNT, FLOW, HEADER, PE } from '../shm/layout.js';
import { stateEpoch, type SharedState } from '../shm/shared-state.js';
import type { Machine } from '../topology/machine.js';
import { Links } from '../topology/links.js';
import { EPSILON_PS, LinkShare, aloneRateOf, pieceBytes, pieceStartPs } from '../topology/link-share.js';
import { actorsBound, commandInFlight } from './snapshot.js';
import { FlowRequestTaker } from '../shm/flow-requests.js';
import { earliestDonePs, memoryTiming, type MemoryTiming } from './arbiter.js';

/** Snapshot attempts before a pass gives up (actors kept changing state; a later ring retries). */
const SNAPSHOT_TRIES = 3;

export class LinkArbiter {
  private readonly links: Links;
  private readonly model: LinkShare;
  /** GB/s of each link id's class. */
  private readonly gbPerS: ArrayLike<number>;
  /** Flows added per outbound channel (pe * 4 + dir). */
  private readonly added: Int32Array;
  private readonly channels: number;
  /** The shared memories' latency and bandwidth: when a PE waiting for a grant can resume. */
  private readonly memory: MemoryTiming;
  /** The channels that marked a request (../shm/flow-requests.ts), until it is added. */
  private readonly requests: FlowRequestTaker;
  /** Passes whose snapshot stayed inconsistent through every try (actors kept changing state): SessionReport.linkSnapshotsFailed. */
  snapshotsFailed = 0;

  constructor(
    private readonly sh: SharedState,
    m: Machine,
  ) {
    this.links = new Links(m);
    this.gbPerS = this.links.bandwidths();
    this.model = new LinkShare(this.gbPerS);
    this.channels = sh.layout.dims.pes * DIR_COUNT;
    this.added = new Int32Array(this.channels);
    this.memory = memoryTiming(m);
    this.requests = new FlowRequestTaker(this.channels);
  }

  /**
   * Add the new requests and make final what can be (hold the arbiter's lock).
   * Returns the outbound channels (pe * 4 + dir) whose flow became final.
   */
  pass(): number[] {
    const { sh } = this;
    const L = sh.layout;
    const ctl = sh.ctl;
    const times = sh.times;
    if (Atomics.load(ctl, HEADER.FLOWS_PENDING) === 0) return [];
    const snap = this.snapshot();
    if (snap === null) return [];
    // New requests, in channel order (the model takes flows in any order: ties by id).
    for (const c of snap.fresh) {
      const pe = Math.floor(c / DIR_COUNT), dir = c % DIR_COUNT;
      const k = this.added[c]++;
      const peer = times[L.flow(pe, dir, FLOW.PEER)];
      const serialPs = times[L.flow(pe, dir, FLOW.SERIAL_PS)];
      const route = this.links.route(pe, peer);
      // Bytes such that alone, at the route's narrowest link, the piece takes exactly serialPs.
      const bytes = pieceBytes(serialPs, aloneRateOf(route, this.gbPerS));
      // It enters its links after its latency, and not before the sends its kernel waited for arrived.
      const latencyPs = times[L.flow(pe, dir, FLOW.LATENCY_PS)];
      const startPs = pieceStartPs(times[L.flow(pe, dir, FLOW.START_PS)], latencyPs, times[L.flow(pe, dir, FLOW.JOIN_MIN_PS)]);
      // CM02's sharing penalty: the route's latency (longer routes get less of a shared link).
      this.model.add({ id: k * this.channels + c, startPs, bytes, alonePs: bytes === 0 ? undefined : serialPs, route, latencyPs, penalty: Math.max(1, latencyPs) });
    }
    // A channel asks again only once answered; a candidate is kept while its FLOW_REQ is ahead of what was added.
    this.requests.keep((c) => Atomics.load(ctl, L.pe(Math.floor(c / DIR_COUNT), PE.FLOW_REQ + (c % DIR_COUNT))) > this.added[c]);
    const done = this.model.pending > 0 ? this.model.advanceTo(snap.bound, true) : [];
    const woke: number[] = [];
    for (const d of done) {
      const c = d.id % this.channels;
      const pe = Math.floor(c / DIR_COUNT), dir = c % DIR_COUNT;
      times[L.flow(pe, dir, FLOW.SENT_PS)] = d.sentPs;
      // Its bound from now on (it resumes when the last byte left); it rewrites the word itself when it next blocks.
      times[L.clock(L.channelActor(pe, dir))] = d.sentPs;
      Atomics.add(ctl, L.pe(pe, PE.FLOW_DONE + dir), 1);
      Atomics.sub(ctl, HEADER.FLOWS_PENDING, 1);
      woke.push(c);
    }
    // Every flow not yet final ends after the safe time reached, and is reported at a whole ps after it
    // (rounded up): its sender resumes no earlier (the memory arbiter's bound for them, ./arbiter.ts).
    const reached = this.model.safePs;
    if (Number.isFinite(reached)) times[L.linkBound] = Math.floor(reached - EPSILON_PS) + 1;
    return woke;
  }

  /** The channels with a request not yet added, and the actors' bound, from a consistent snapshot; null when none could be taken or a command is in flight. */
  private snapshot(): { fresh: number[]; bound: number } | null {
    const { sh } = this;
    const L = sh.layout;
    const ctl = sh.ctl;
    const times = sh.times;
    for (let attempt = 0; attempt < SNAPSHOT_TRIES; attempt++) {
      const epoch = stateEpoch(sh);
      if (commandInFlight(sh)) return null;
      // Only the channels that marked a request since they were last taken (../shm/flow-requests.ts), in channel order.
      this.requests.take(ctl, L);
      const fresh: number[] = [];
      for (const c of this.requests.candidates()) {
        const pe = Math.floor(c / DIR_COUNT), dir = c % DIR_COUNT;
        if (Atomics.load(ctl, L.pe(pe, PE.FLOW_REQ + dir)) > this.added[c]) fresh.push(c);
      }
      let bound = Infinity;
      // A PE waiting for a memory grant resumes no earlier than its access alone can complete
      // (earliestDonePs, ./arbiter.ts: past its request, so the memory arbiter's link bound passes the
      // request). Not its request time: a flow ending before that completion is made final first,
      // and its sender's own access, at its last byte, is served before the request
      // (docs/decisions/0204). Its flows join at or after that whole ps, so ends up to EPSILON_PS
      // later (reported as that ps) may be made final.
      // GRANTS_PENDING rises before a request's REQ_SEQ (lib/kernel/memory-port.ts): at 0 none is pending.
      if (Atomics.load(ctl, HEADER.GRANTS_PENDING) > 0) {
        for (let pe = 0; pe < L.dims.pes; pe++) {
          if (Atomics.load(ctl, L.pe(pe, PE.REQ_SEQ)) > Atomics.load(ctl, L.pe(pe, PE.GRANT_SEQ))) bound = Math.min(bound, earliestDonePs(sh, this.memory, pe) + EPSILON_PS);
        }
      }
      bound = Math.min(bound, actorsBound(sh, -1, -Infinity));
      if (stateEpoch(sh) === epoch) return { fresh, bound };
    }
    this.snapshotsFailed++;
    return null;
  }
}

// Runs on: executor threads. Owns: a PE's outbound DMA channel for one
// direction: its rings (one per channel set), the sending of a payload piece by
// piece, and where each piece's times come from.
//
// Piece i of a payload (pieces of vc_chunk_size bytes, cut on element boundaries):
//   credit_i  = freed time of message (k - n_slots) + credit latency   (k >= n_slots)
//   ready_i   = max(channel clock, issue time, credit_i) + dma setup
//   sent_i    = the link timing's answer for ready_i, serial_i        (./link-timing.ts)
//   channel clock = sent_i                              (the link is busy until then)
//   arrival_i = sent_i + hops * alpha                   (cut-through)
// serial_i = round(c_i / beta) - round(c_(i-1) / beta), c_i the payload's bytes up to
// and including piece i: the pieces of one payload add up to round(S / beta), rounded
// once, whatever their number (rounding each piece on its own let the error grow with
// the piece count). With links not shared, sent_i = ready_i + serial_i.
// On the ideal topology (no setup, free memory) a payload of S bytes over one hop
// costs exactly alpha + S/beta, whatever the cut — the alpha-beta law.
//
// Fast path: when the channel has nothing queued, its link timing answers at once
// and the ring already has every credit, the send completes synchronously with the
// same formulas, encoding straight into the slots. It is an optimisation of wall
// time only: the virtual times are computed by the same code in the same order
// (see bench sim_throughput for why it matters).
import { bytesPerElement, encode, type DType } from '../dtype/index.js';
import { ACTOR_STATE, DIRECTIONS, WAIT_KIND } from '../shm/layout.js';
import { NO_ACTOR } from '../sync/scheduler.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import { transferPs, ZERO_PS } from '../time/virtual-time.js';
import { allocBytes, type KernelRun } from '../tile/slab.js';
import { ChannelOp } from './channel-op.js';
import { Channel } from './channel-queue.js';
import { HeldSend, type HeldSendHost } from './held-send.js';
import { linkTimingFor, PieceTimes, type LinkTiming } from './link-timing.js';
import { peerRingView, ringView, type IpcqRingView } from './ring.js';

const EMPTY = new Uint8Array(0);

/** The sending end of one ring: the ring and the next message's sequence number on it. */
class SendRing {
  seq: number;
  constructor(
    readonly view: IpcqRingView,
    ctl: Int32Array,
  ) {
    this.seq = Atomics.load(ctl, view.tailWord);
  }

  /** A peer ring's end, pointed at ring `ring` (its view's own: IpcqRingView.retarget), at that ring's tail. */
  retarget(ring: number, ctl: Int32Array): void {
    this.view.retarget(ring);
    this.seq = Atomics.load(ctl, this.view.tailWord);
  }
}

/** The costs of the link to one peer (a channel asks for them on every piece). */
interface PeerLink {
  flightPs: number;
  creditPs: number;
  gbPerS: number;
}

export class OutboundChannel extends Channel implements HeldSendHost {
  /** Per group channel set (below ccl.channel_sets), its ring in this direction (opened on first use). */
  private readonly rings: (SendRing | undefined)[] = [];
  /**
   * The peer sets' rings this channel may still use (decision 0060): an all-to-all sends on
   * a ring to each of p - 1 peers, so they are not kept for the session. A new one opened
   * while the channel is idle drops the rest: no op then holds one, and each reopens at its
   * ring's tail, which only this channel writes (decision 0269).
   */
  private readonly peers = new Map<number, SendRing>();
  /** When a piece's last byte leaves, in the plan's link mode (./link-timing.ts). */
  private readonly timing: LinkTiming;
  /** The fast path applies: the link timing answers at once and no jitter point is due. */
  private readonly fastPath: boolean;
  /**
   * The last piece's arrival at its receiver, as the last send published it: the kernel
   * reads it after a send that completed at once (a queued send's op carries its own).
   */
  lastArrivalPs = ZERO_PS;

  constructor(env: ThreadEnv, pe: number, dir: number) {
    super(env, pe, dir);
    this.timing = linkTimingFor(env.plan.links, env, pe, dir, this.actor);
    this.fastPath = this.timing.synchronous && !env.sched.jitter;
    this.openRing(0);
  }

  private openRing(set: number): SendRing {
    const sh = this.env.shared;
    const r = new SendRing(ringView(sh, sh.layout.ringOf(this.pe, this.channel, set)), sh.ctl);
    this.rings[set] = r;
    return r;
  }

  private peerRing(set: number): SendRing {
    let r = this.peers.get(set);
    if (r === undefined) {
      if (this.idle) {
        // No op holds them: their objects serve the next peers (decision 0270).
        for (const kept of this.peers.values()) this.sparePeers.push(kept);
        this.peers.clear();
      }
      const sh = this.env.shared;
      const ring = sh.layout.ringOf(this.pe, this.channel, set);
      r = this.sparePeers.pop();
      if (r === undefined) r = new SendRing(peerRingView(sh, ring), sh.ctl);
      else r.retarget(ring, sh.ctl);
      this.peers.set(set, r);
    }
    return r;
  }
  /** Peer rings' sending ends no op holds, to be pointed at the next peers' rings. */
  private readonly sparePeers: SendRing[] = [];

  /** How many peer rings this channel keeps (tests). */
  get peerRingsKept(): number {
    return this.peers.size;
  }

  /**
   * Send `values` (as `dtype`) to PE `peer` on the ring of channel set `set`:
   * the time the last byte left the link, as a number when the send completed
   * at once (the fast path; its arrival is then `lastArrivalPs`), else an op that
   * settles with it. `run` is the kernel whose tile memory a queued send's snapshot
   * of its payload is (lib/tile/slab.ts).
   */
  send(set: number, peer: number, dtype: DType, values: Float32Array, issuePs: number, joinNotBeforePs: number, run: KernelRun | undefined): ChannelOp<number> | number {
    const r = set < this.groupSets ? (this.rings[set] ?? this.openRing(set)) : this.peerRing(set);
    const pieceBytes = this.pieceBytes(dtype);
    const nbytes = values.length * bytesPerElement(dtype);
    const pieces = Math.max(1, Math.ceil(nbytes / pieceBytes));
    if (this.fastPath && this.idle) {
      const piece = this.piece;
      piece.readyPs = issuePs;
      piece.joinNotBeforePs = joinNotBeforePs;
      if (r.view.headAtLeast(r.seq + pieces - r.view.nSlots)) {
        if (this.planAlone(r, peer, dtype, values.length, pieces, pieceBytes)) {
          this.sendNow(r, peer, dtype, values, pieces, pieceBytes);
          return this.planned[3 * pieces - 1];
        }
        // One piece not proved alone: held here for a pass, or asked of the arbiter, as the queued path would.
        const held = this.timing.held;
        if (pieces === 1 && held !== undefined) return this.holdNow(r, peer, dtype, values, nbytes, issuePs, !held.mayHold(peer));
      }
    }
    if (this.holding !== undefined) {
      // Behind a held send: the chain starts when it settles.
      this.tail = this.holding.op.promise.catch(() => undefined);
      this.holding = undefined;
    }
    return this.sendQueued(r, peer, dtype, values, nbytes, issuePs, pieces, pieceBytes, joinNotBeforePs, run);
  }

  /** The held send in progress (holdNow), until a send is queued behind it or it settles. */
  private holding: HeldSend | undefined;
  /** A held send's waiter, free for the next one. */
  private spareHeld: HeldSend | undefined;
  /** The held piece's ring, until it is published. */
  private heldRing: SendRing | undefined;

  /**
   * The fast path's one piece that planAlone could not prove alone (its times are in
   * `piece`, its credit is back): its payload goes into its slot now, as sendNow's, and
   * the piece is held for the pass that releases it, or (`arbitrated`) waits for the
   * link arbiter's answer, BLOCKED meanwhile as the queued path's wait is
   * (./held-send.ts). The channel is RUNNING from now until then, as for any queued
   * operation (enqueue).
   */
  private holdNow(r: SendRing, peer: number, dtype: DType, values: Float32Array, nbytes: number, issuePs: number, arbitrated: boolean): ChannelOp<number> {
    const { env } = this;
    const sched = env.sched;
    sched.setState(this.actor, ACTOR_STATE.RUNNING);
    const op = new ChannelOp<number>(this.channel, this.issued++);
    if (!env.plan.noData) {
      const ring = r.view;
      if (dtype === 'f32') ring.payloadF32(r.seq, values.length).set(values);
      else encode(dtype, values, ring.payload(r.seq, nbytes));
    }
    let h = this.spareHeld;
    if (h === undefined) h = new HeldSend(this, this.timing.held!);
    else this.spareHeld = undefined;
    this.holding = h;
    this.heldRing = r;
    h.start(op, peer, this.piece, Math.max(this.clock.nowPs, issuePs), this.creditWaitPs, nbytes, arbitrated);
    const ctl = env.shared.ctl;
    if (Atomics.load(ctl, h.word) >= h.target) h.resolve();
    else {
      this.heldBlocked = arbitrated;
      sched.parkWaiter(arbitrated ? this.actor : NO_ACTOR, h, WAIT_KIND.LINK, peer, h.piece.readyPs);
    }
    return op;
  }

  /** @internal The held piece of `h` left its links: publish it, as the queued path's run does, and settle its op. */
  heldSent(h: HeldSend, sentPs: number): void {
    const r = this.heldRing!;
    const { env } = this;
    this.unblockHeld();
    const ring = r.view;
    const k = r.seq;
    this.creditWaitPs = h.creditWaitPs;
    h.op.arrivalPs = this.publishPiece(r, h.peer, h.bytes, h.fromPs, sentPs, true);
    env.stats.messages++;
    this.wake(ring.tailWord, env.plan.peExecutor[h.peer], ring.dataWanted(k, k + 1));
    this.clock.advanceTo(sentPs);
    this.heldEnded(h, sentPs);
  }

  /** @internal The session stopped while `h` was held (or its hand-over to the arbiter failed): its op fails. */
  heldFailed(h: HeldSend, e: unknown): void {
    this.unblockHeld();
    this.heldEnded(h, ZERO_PS, e);
  }

  /** A held send parked BLOCKED (for the arbiter's answer): RUNNING again as it resumes or fails, as the queued path's wait ends. */
  private unblockHeld(): void {
    if (!this.heldBlocked) return;
    this.heldBlocked = false;
    this.env.sched.unblock(this.actor);
  }
  private heldBlocked = false;

  /** As the queued chain's end does (enqueue), then settle the op. */
  private heldEnded(h: HeldSend, sentPs: number, error?: unknown): void {
    if (this.holding === h) this.holding = undefined;
    this.heldRing = undefined;
    this.settledCount++;
    Atomics.add(this.env.shared.ctl, this.doneWord, 1);
    // IDLE, or RUNNING for the sends queued behind this one (their chain ends IDLE: enqueue).
    if (this.idle) this.env.sched.setState(this.actor, ACTOR_STATE.IDLE);
    const op = h.op;
    this.spareHeld = h;
    op.settle(sentPs, error);
  }

  /**
   * The slow path: snapshot the payload now (the kernel may reuse its tile), send piece by
   * piece. The snapshot is tile memory: the send ends before its kernel does (lib/tile/slab.ts).
   * A method of its own: the closure's captured arguments would make V8 allocate their
   * context (and box the times) on entry to `send`, on the fast path too.
   */
  private sendQueued(r: SendRing, peer: number, dtype: DType, values: Float32Array, nbytes: number, issuePs: number, pieces: number, pieceBytes: number, joinNotBeforePs: number, run: KernelRun | undefined): ChannelOp<number> {
    const payload = this.env.plan.noData ? EMPTY : allocBytes(nbytes, run);
    if (!this.env.plan.noData) encode(dtype, values, payload);
    return this.enqueue((op) => this.run(op, r, peer, payload, nbytes, issuePs, pieces, pieceBytes, joinNotBeforePs));
  }

  /**
   * Plan a send completing at once, before anything is published: each piece's times
   * alone, into `planned`. False when a piece may not take
   * them (./link-timing.ts): the send then takes the queued path, where it may wait.
   * The send's issue time and link horizon come in `piece` (readyPs, joinNotBeforePs), and
   * the times go to the link timing in it: doubles passed to a call V8 did not inline
   * are boxed into a heap number each (decision 0216).
   */
  private planAlone(r: SendRing, peer: number, dtype: DType, count: number, pieces: number, pieceBytes: number): boolean {
    if (this.planned.length < 3 * pieces) this.planned = new Float64Array(3 * pieces);
    const planned = this.planned;
    const bpe = bytesPerElement(dtype);
    const per = pieceBytes / bpe;
    const link = this.linkTo(peer);
    const piece = this.piece;
    let t = Math.max(this.clock.nowPs, piece.readyPs);
    let sentPs = 0;
    piece.flightPs = link.flightPs;
    for (let i = 0; i < pieces; i++) {
      const n = Math.min(per, count - i * per);
      const upToPs = transferPs((i * per + n) * bpe, link.gbPerS);
      piece.readyPs = this.pieceReadyPs(r.view, r.seq + i, t, link);
      piece.serialPs = upToPs - sentPs;
      if (!this.timing.sentAlone(peer, piece)) return false;
      planned[3 * i] = t;
      planned[3 * i + 1] = this.creditWaitPs;
      t = piece.sentPs;
      planned[3 * i + 2] = t;
      sentPs = upToPs;
    }
    return true;
  }

  /** Every piece has its credit, and its times planned alone (planAlone): encode straight into the slots. The send is done at planned[3 pieces - 1]. */
  private sendNow(r: SendRing, peer: number, dtype: DType, values: Float32Array, pieces: number, pieceBytes: number): void {
    const { env } = this;
    const ring = r.view;
    const bpe = bytesPerElement(dtype);
    const per = pieceBytes / bpe;
    const planned = this.planned;
    for (let i = 0; i < pieces; i++) {
      const k = r.seq;
      const n = Math.min(per, values.length - i * per);
      if (env.plan.noData) {
        // timing-only mode: the header (sizes, times) travels, the bytes do not
      } else {
        const piece = pieces === 1 ? values : values.subarray(i * per, i * per + n);
        if (dtype === 'f32') ring.payloadF32(k, n).set(piece);
        else encode(dtype, piece, ring.payload(k, n * bpe));
      }
      this.creditWaitPs = planned[3 * i + 1];
      this.publishPiece(r, peer, n * bpe, planned[3 * i], planned[3 * i + 2], i === 0);
    }
    const t = planned[3 * pieces - 1];
    env.stats.messages += pieces;
    if (this.timing.checksAlone) env.stats.linkPieces.alone += pieces;
    this.wake(ring.tailWord, env.plan.peExecutor[peer], ring.dataWanted(r.seq - pieces, r.seq));
    this.clock.advanceTo(t);
  }

  /** The queued path: piece by piece, waiting for credits. `payload` is empty in timing-only mode; `nbytes` is what the pieces say they carry. */
  private async run(op: ChannelOp<number>, r: SendRing, peer: number, payload: Uint8Array, nbytes: number, issuePs: number, pieces: number, pieceBytes: number, joinNotBeforePs: number): Promise<number> {
    const { env } = this;
    const ring = r.view;
    const { sched, plan } = env;
    const nSlots = ring.nSlots;
    const consumer = plan.peExecutor[peer];
    let t = Math.max(this.clock.nowPs, issuePs);
    let sentPs = 0;
    for (let i = 0; i < pieces; i++) {
      const k = r.seq;
      const b = Math.min(pieceBytes, nbytes - i * pieceBytes);
      // Wait for the slot's credit, unless it is back already (jitter mode always goes through the wait).
      if (k >= nSlots && (sched.jitter || !ring.headAtLeast(k - nSlots + 1))) {
        ring.wantCredit(k - nSlots + 1);
        await sched.waitUntil(this.actor, ring.headWord, k - nSlots + 1, WAIT_KIND.IPCQ_CREDIT, ring.ring, t);
      }
      const link = this.linkTo(peer);
      const upToPs = transferPs(i * pieceBytes + b, link.gbPerS);
      const readyPs = t;
      const sent = this.timing.cross(peer, this.pieceReadyPs(ring, k, t, link), upToPs - sentPs, link.flightPs, joinNotBeforePs);
      t = typeof sent === 'number' ? sent : await sent;
      sentPs = upToPs;
      if (sched.jitter) await sched.jitter.point();
      if (!plan.noData) ring.payload(k, b).set(payload.subarray(i * pieceBytes, i * pieceBytes + b));
      op.arrivalPs = this.publishPiece(r, peer, b, readyPs, t, i === 0);
      env.stats.messages++;
      this.wake(ring.tailWord, consumer, ring.dataWanted(k, k + 1));
    }
    this.clock.advanceTo(t);
    return t;
  }

  /** Publish the ring's next piece (its payload is in the slot), last byte sent at `sentPs`: its arrival, the one place it is computed. */
  private publishPiece(r: SendRing, peer: number, bytes: number, readyPs: number, sentPs: number, first: boolean): number {
    const ring = r.view;
    const k = r.seq;
    const arrivalPs = sentPs + this.linkTo(peer).flightPs;
    ring.publish(k, bytes, arrivalPs, this.pe, peer);
    this.env.trace?.pieceOut(ring.ring, k, this.pe, DIRECTIONS[this.channel], peer, bytes, readyPs, this.creditWaitPs, sentPs, arrivalPs, first);
    r.seq = k + 1;
    this.lastArrivalPs = arrivalPs;
    return arrivalPs;
  }

  // The link to the peer, memoised: a channel sends to one peer per kernel, and the
  // costs are asked for on every piece (credit, serialisation, flight).
  private linkPeer = -1;
  private link: PeerLink = { flightPs: 0, creditPs: 0, gbPerS: Infinity };

  private linkTo(peer: number): PeerLink {
    if (peer !== this.linkPeer) {
      const { costs, plan } = this.env;
      this.linkPeer = peer;
      this.link = {
        flightPs: costs.flightPs(this.pe, peer),
        creditPs: costs.serialPs(peer, this.pe, plan.ccl.ipcq_credit_size_bytes) + costs.flightPs(peer, this.pe),
        gbPerS: costs.bandwidthGbPerS(this.pe, peer),
      };
    }
    return this.link;
  }

  /** How much later than the channel was ready the last piece's credit let it start (virtual ps; for the records, lib/trace). */
  private creditWaitPs = ZERO_PS;
  /** The times of the piece the fast path plans (planAlone), handed to the link timing. */
  private readonly piece = new PieceTimes();
  /**
   * A send planned alone (planAlone), three numbers a piece: the time piece i was ready
   * from (3i), its credit wait (3i + 1), when its last byte left (3i + 2). One typed array,
   * not three: each is an object, its buffer and its store (decision 0226).
   */
  private planned = new Float64Array(3);

  /** When piece `k` is ready for its link: its slot's credit back (k >= n_slots) and the DMA setup paid. */
  private pieceReadyPs(ring: IpcqRingView, k: number, t: number, link: PeerLink): number {
    const nSlots = ring.nSlots;
    let start = t;
    if (k >= nSlots) start = Math.max(t, ring.freedPs(k - nSlots) + link.creditPs);
    this.creditWaitPs = start - t;
    return start + this.env.costs.dmaSetupPs;
  }
}

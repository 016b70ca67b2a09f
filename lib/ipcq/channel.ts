// Runs on: executor threads. Owns: a PE's DMA channels — one outbound and one
// inbound per direction — which carry IPCQ transfers in the background of the
// kernel, each on its own virtual timeline. This is where IPCQ timing lives.
//
// A channel is the PE's DMA engine for its direction: it serves every channel
// set (one set of rings per process group, lib/shm/layout.ts), and each
// operation names the set its kernel's port table carries. A PE runs one
// kernel at a time and a kernel drains its operations before it ends, so the
// engine's one FIFO chain and one clock hold for every set
// (docs/decisions/0020-a-channel-set-per-process-group.md).
//
// A channel runs its operations one at a time in issue order (a FIFO chain), so
// the sequence of ring operations on every ring is fixed by the program alone:
// each ring is a Kahn channel and the run is deterministic however threads
// interleave (docs/determinism.md).
//
// Outbound, piece i of a payload (pieces of vc_chunk_size bytes, cut on element boundaries):
//   credit_i  = freed time of message (k - n_slots) + credit latency   (k >= n_slots)
//   start_i   = max(channel clock, issue time, credit_i) + dma setup
//   channel clock = start_i + serial_i                  (the link is busy until then)
//   arrival_i = channel clock + hops * alpha            (cut-through)
// serial_i = round(c_i / beta) - round(c_(i-1) / beta), c_i the payload's bytes up to
// and including piece i: the pieces of one payload add up to round(S / beta), rounded
// once, whatever their number (rounding each piece on its own let the error grow with
// the piece count).
// Inbound, piece i:
//   channel clock = max(channel clock, issue time, arrival_i) + staging read(bytes_i)
//   freed_i   = channel clock                            (the credit leaves then)
// On the ideal topology (no setup, free memory) a payload of S bytes over one hop
// costs exactly alpha + S/beta, whatever the cut — the alpha-beta law.
//
// Fast path: when a channel has nothing queued and the ring already has the
// credits (send) or every piece (receive), the operation completes synchronously
// with the same formulas, copying straight between the tile and the slot. It is
// an optimisation of wall time only: the virtual times are computed by the
// same code in the same order (see bench sim_throughput for why it matters).
import { bytesPerElement, decode, encode, type DType } from '../dtype/index.js';
import { ACTOR_STATE, DIRECTIONS, FLOW, HEADER, PE, WAIT_KIND } from '../shm/layout.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import type { Waiter } from '../sync/scheduler.js';
import { ringView, type IpcqRingView } from './ring.js';
import { linkOverlapOf, type LinkOverlap, type Route } from './link-overlap.js';
import { VirtualClock } from '../time/virtual-clock.js';
import { transferPs } from '../time/virtual-time.js';
import { allocBytes } from '../tile/slab.js';

const EMPTY = new Uint8Array(0);
const EMPTY_F32 = new Float32Array(0);

/**
 * A queued channel operation: its completion time once settled (a receive's
 * values are then in its array). Settled either by the promise chain it was
 * attached to (attach), or directly (settle) by a receive that parks
 * without one (InboundChannel, ParkedRecv); its promise is then made only
 * when someone asks for it.
 */
export class ChannelOp<T> {
  settled = false;
  value: T | undefined;
  error: unknown;
  private pending: Promise<T> | undefined;
  private resolvePending: ((v: T) => void) | undefined;
  private rejectPending: ((e: unknown) => void) | undefined;

  constructor(
    readonly channel: number,
    /** Index among the channel's queued operations. */
    readonly index: number,
  ) {}

  get promise(): Promise<T> {
    if (!this.pending) {
      if (this.settled) this.pending = this.error !== undefined ? Promise.reject(this.error) : Promise.resolve(this.value as T);
      else
        this.pending = new Promise<T>((resolve, reject) => {
          this.resolvePending = resolve;
          this.rejectPending = reject;
        });
    }
    return this.pending;
  }

  /** @internal Settle an op no promise chain drives: with its completion time, or failed with `error`. */
  settle(value: T, error?: unknown): void {
    this.settled = true;
    this.value = value;
    this.error = error;
    const resolve = this.resolvePending;
    const reject = this.rejectPending;
    this.resolvePending = this.rejectPending = undefined;
    if (error !== undefined) reject?.(error);
    else resolve?.(value);
  }

  /** @internal */
  attach(p: Promise<T>): void {
    this.pending = p.then(
      (v) => {
        this.settled = true;
        this.value = v;
        return v;
      },
      (e: unknown) => {
        this.settled = true;
        this.error = e;
        throw e;
      },
    );
    // The kernel observes failures when it waits or drains; never an unhandled rejection.
    this.pending.catch(() => undefined);
  }
}

abstract class Channel {
  /** The channel's own virtual timeline (ps). */
  /** The DMA engine's virtual time: when it is free for the next transfer. */
  readonly clock = new VirtualClock();
  protected tail: Promise<unknown> = Promise.resolve();
  /** Queued (asynchronous) operations issued and settled; equal means idle. */
  protected issued: number;
  protected settledCount: number;
  protected readonly actor: number;
  readonly doneWord: number;

  constructor(
    protected readonly env: ThreadEnv,
    readonly pe: number,
    /** 0..3 outbound by direction, 4..7 inbound. */
    readonly channel: number,
  ) {
    const L = env.shared.layout;
    this.actor = L.channelActor(pe, channel);
    this.doneWord = L.pe(pe, PE.CHAN_DONE + channel);
    this.issued = Atomics.load(env.shared.ctl, this.doneWord);
    this.settledCount = this.issued;
  }

  get idle(): boolean {
    return this.settledCount === this.issued;
  }

  protected enqueue<T>(run: () => Promise<T>): ChannelOp<T> {
    const sched = this.env.sched;
    // RUNNING from the moment work is queued, not from when the chain reaches
    // it: otherwise the deadlock detector could see a kernel waiting on an IDLE
    // channel whose operation is about to start, and call it a deadlock.
    if (this.idle) sched.setState(this.actor, ACTOR_STATE.RUNNING);
    const op = new ChannelOp<T>(this.channel, this.issued++);
    op.attach(
      this.tail.then(async () => {
        try {
          return await run();
        } finally {
          this.settledCount++;
          Atomics.add(this.env.shared.ctl, this.doneWord, 1);
          if (this.idle) sched.setState(this.actor, ACTOR_STATE.IDLE);
        }
      }),
    );
    this.tail = op.promise.catch(() => undefined);
    return op;
  }

  /** After publishing `word`: resolve same-thread waiters; ring another thread only if its waiter wants this. */
  protected wake(word: number, executor: number, wanted: boolean): void {
    const sched = this.env.sched;
    if (executor === sched.executor) sched.signal(word);
    else if (wanted) sched.ring(executor);
  }

  /** Bytes per piece for elements of `dt`: vc_chunk_size rounded down to whole elements. */
  protected pieceBytes(dt: DType): number {
    return pieceBytesFor(this.env.plan.ccl.vc_chunk_size, dt);
  }
}

/** The sending end of one ring: the ring and the next message's sequence number on it. */
class SendRing {
  seq: number;
  constructor(
    readonly view: IpcqRingView,
    ctl: Int32Array,
  ) {
    this.seq = Atomics.load(ctl, view.tailWord);
  }
}

export class OutboundChannel extends Channel {
  /** Per channel set, its ring in this direction (opened on first use). */
  private readonly rings: (SendRing | undefined)[] = [];
  /**
   * timing.link_sharing: max_min. Optimistic: every piece's times are its own alone, checked
   * for overlap with other flows (./link-overlap.ts). Arbitrated: every piece is a flow the
   * link arbiter makes final (lib/coordinator/link-arbiter.ts).
   */
  private readonly overlap: LinkOverlap | null;
  private readonly arbitrated: boolean;

  constructor(env: ThreadEnv, pe: number, dir: number) {
    super(env, pe, dir);
    this.arbitrated = env.plan.links === 'arbitrated';
    this.overlap = env.plan.links === 'optimistic' ? linkOverlapOf(env) : null;
    this.openRing(0);
  }

  private openRing(set: number): SendRing {
    const sh = this.env.shared;
    const r = new SendRing(ringView(sh, sh.layout.ringOf(this.pe, this.channel, set)), sh.ctl);
    this.rings[set] = r;
    return r;
  }

  /**
   * Send `values` (as `dtype`) to PE `peer` on the ring of channel set `set`:
   * the time the last byte left the link, as a number when the send completed
   * at once (the fast path), else an op that settles with it.
   */
  send(set: number, peer: number, dtype: DType, values: Float32Array, issuePs: number, joinNotBeforePs = 0): ChannelOp<number> | number {
    const r = this.rings[set] ?? this.openRing(set);
    const pieceBytes = this.pieceBytes(dtype);
    const nbytes = values.length * bytesPerElement(dtype);
    const pieces = Math.max(1, Math.ceil(nbytes / pieceBytes));
    if (this.idle && !this.env.sched.jitter && !this.arbitrated) {
      const head = Atomics.load(this.env.shared.ctl, r.view.headWord);
      if (r.seq + pieces - r.view.nSlots <= head) return this.sendNow(r, peer, dtype, values, issuePs, pieces, pieceBytes, joinNotBeforePs);
    }
    // Slow path: snapshot the payload now (the kernel may reuse its tile), send piece by piece.
    // The snapshot is tile memory: the send ends before its kernel does (lib/tile/slab.ts).
    const payload = this.env.plan.noData ? EMPTY : allocBytes(nbytes);
    if (!this.env.plan.noData) encode(dtype, values, payload);
    return this.enqueue(() => this.run(r, peer, payload, nbytes, issuePs, pieces, pieceBytes, joinNotBeforePs));
  }

  /** Every piece has its credit: encode straight into the slots. */
  private sendNow(r: SendRing, peer: number, dtype: DType, values: Float32Array, issuePs: number, pieces: number, pieceBytes: number, joinNotBeforePs: number): number {
    const { env } = this;
    const ring = r.view;
    const bpe = bytesPerElement(dtype);
    const per = pieceBytes / bpe;
    const flight = this.linkTo(peer).flightPs;
    let t = Math.max(this.clock.nowPs, issuePs);
    let sentPs = 0;
    for (let i = 0; i < pieces; i++) {
      const k = r.seq;
      const n = Math.min(per, values.length - i * per);
      const upToPs = this.serialUpToPs(peer, (i * per + n) * bpe);
      const readyPs = t;
      if (this.overlap) t = this.overlap.cross(this.linkTo(peer).route as Route, this.pieceTiming(ring, peer, k, t, 0), upToPs - sentPs, flight, joinNotBeforePs);
      else t = this.pieceTiming(ring, peer, k, t, upToPs - sentPs);
      sentPs = upToPs;
      if (env.plan.noData) {
        // timing-only mode: the header (sizes, times) travels, the bytes do not
      } else {
        const piece = pieces === 1 ? values : values.subarray(i * per, i * per + n);
        if (dtype === 'f32') ring.payloadF32(k, n).set(piece);
        else encode(dtype, piece, ring.payload(k, n * bpe));
      }
      ring.publish(k, n * bpe, t + flight, this.pe, peer);
      env.trace?.pieceOut(ring.ring, k, this.pe, DIRECTIONS[this.channel], peer, n * bpe, readyPs, this.creditWaitPs, t, t + flight, i === 0);
      r.seq = k + 1;
    }
    env.stats.messages += pieces;
    this.wake(ring.tailWord, env.plan.peExecutor[peer], ring.dataWanted(r.seq - pieces, r.seq));
    this.clock.advanceTo(t);
    return t;
  }

  // The link to the peer, memoised: a channel sends to one peer per kernel, and the
  // costs are asked for on every piece (credit, serialisation, flight).
  private linkPeer = -1;
  private link: { flightPs: number; creditPs: number; gbPerS: number; route: Route | null } = { flightPs: 0, creditPs: 0, gbPerS: Infinity, route: null };

  private linkTo(peer: number): { flightPs: number; creditPs: number; gbPerS: number; route: Route | null } {
    if (peer !== this.linkPeer) {
      const { costs, plan } = this.env;
      this.linkPeer = peer;
      this.link = {
        flightPs: costs.flightPs(this.pe, peer),
        creditPs: costs.serialPs(peer, this.pe, plan.ccl.ipcq_credit_size_bytes) + costs.flightPs(peer, this.pe),
        gbPerS: costs.bandwidthGbPerS(this.pe, peer),
        // Shared links, optimistic: the piece's route on the physical links (./link-overlap.ts).
        route: this.overlap ? this.overlap.route(this.pe, peer) : null,
      };
    }
    return this.link;
  }

  /** Serialisation time of a payload's first `bytes` bytes on the link to `peer`, rounded once (see the header). */
  private serialUpToPs(peer: number, bytes: number): number {
    return transferPs(bytes, this.linkTo(peer).gbPerS);
  }

  /** How much later than the channel was ready the last piece's credit let it start (virtual ps; for the records, lib/trace). */
  private creditWaitPs = 0;

  /** Start time bookkeeping of one piece (credit, setup, its share `serialPs` of the payload's serialisation); returns the channel clock after it. */
  private pieceTiming(ring: IpcqRingView, peer: number, k: number, t: number, serialPs: number): number {
    const nSlots = ring.nSlots;
    let start = t;
    if (k >= nSlots) start = Math.max(t, ring.freedPs(k - nSlots) + this.linkTo(peer).creditPs);
    this.creditWaitPs = start - t;
    return start + this.env.costs.dmaSetupPs + serialPs;
  }

  /**
   * A piece that starts at `startPs`, flies `latencyPs` and takes `serialPs` alone
   * (entering its links no earlier than `joinNotBeforePs`): ask the link arbiter
   * (on the coordinator) when its last byte left, sharing its route's links with
   * the flows that cross them at once; wait for the answer.
   */
  private async crossLinks(peer: number, startPs: number, serialPs: number, latencyPs: number, joinNotBeforePs: number): Promise<number> {
    const { sched, shared } = this.env;
    const L = shared.layout;
    const dir = this.channel;
    shared.times[L.flow(this.pe, dir, FLOW.START_PS)] = startPs;
    shared.times[L.flow(this.pe, dir, FLOW.SERIAL_PS)] = serialPs;
    shared.times[L.flow(this.pe, dir, FLOW.PEER)] = peer;
    shared.times[L.flow(this.pe, dir, FLOW.LATENCY_PS)] = latencyPs;
    shared.times[L.flow(this.pe, dir, FLOW.JOIN_MIN_PS)] = joinNotBeforePs;
    Atomics.add(shared.ctl, HEADER.FLOWS_PENDING, 1);
    const n = Atomics.add(shared.ctl, L.pe(this.pe, PE.FLOW_REQ + dir), 1) + 1;
    // Blocking publishes this channel as waiting, which rings the coordinator (flows are pending).
    await sched.waitUntil(this.actor, L.pe(this.pe, PE.FLOW_DONE + dir), n, WAIT_KIND.LINK, peer, startPs);
    return shared.times[L.flow(this.pe, dir, FLOW.SENT_PS)];
  }

  /** `payload` is empty in timing-only mode; `nbytes` is what the pieces say they carry. */
  private async run(r: SendRing, peer: number, payload: Uint8Array, nbytes: number, issuePs: number, pieces: number, pieceBytes: number, joinNotBeforePs: number): Promise<number> {
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
      if (k >= nSlots && (sched.jitter || Atomics.load(env.shared.ctl, ring.headWord) < k - nSlots + 1)) {
        ring.wantCredit(k - nSlots + 1);
        await sched.waitUntil(this.actor, ring.headWord, k - nSlots + 1, WAIT_KIND.IPCQ_CREDIT, ring.ring, t);
      }
      const upToPs = this.serialUpToPs(peer, i * pieceBytes + b);
      const readyPs = t;
      if (this.overlap) t = this.overlap.cross(this.linkTo(peer).route as Route, this.pieceTiming(ring, peer, k, t, 0), upToPs - sentPs, this.linkTo(peer).flightPs, joinNotBeforePs);
      else if (this.arbitrated) t = await this.crossLinks(peer, this.pieceTiming(ring, peer, k, t, 0), upToPs - sentPs, this.linkTo(peer).flightPs, joinNotBeforePs);
      else t = this.pieceTiming(ring, peer, k, t, upToPs - sentPs);
      sentPs = upToPs;
      if (sched.jitter) await sched.jitter.point();
      if (!plan.noData) ring.payload(k, b).set(payload.subarray(i * pieceBytes, i * pieceBytes + b));
      const arrivalPs = t + this.linkTo(peer).flightPs;
      ring.publish(k, b, arrivalPs, this.pe, peer);
      env.trace?.pieceOut(ring.ring, k, this.pe, DIRECTIONS[this.channel], peer, b, readyPs, this.creditWaitPs, t, arrivalPs, i === 0);
      r.seq = k + 1;
      env.stats.messages++;
      this.wake(ring.tailWord, consumer, ring.dataWanted(k, k + 1));
    }
    this.clock.advanceTo(t);
    return t;
  }
}

/**
 * A receive in progress: where its pieces come from and go, and how far it is
 * (the virtual time `t` its next piece is read from, the bytes `got` so far).
 * As a ParkedRecv it is also the scheduler's waiter for its next piece.
 */
class RecvState {
  /** Bytes of the piece read last, when the channel was ready for it, and when it had arrived (for freePiece's records). */
  bytes = 0;
  readyPs = 0;
  arrivalPs = 0;
  got = 0;

  constructor(
    public ring: IpcqRingView,
    public sender: number,
    public dtype: DType,
    public values: Float32Array,
    public nbytes: number,
    public t: number,
  ) {}
}

/**
 * A receive issued on an idle channel before all its pieces are in: the
 * queued path's steps (InboundChannel.run) as a state machine, parked on its
 * ring's tail with the scheduler between pieces and resumed synchronously by
 * the publish that brings the next one. No promise chain, async frame or
 * parked promise per receive. Under --threads 2 the ring all-reduce at
 * p = 1024 parks about one receive in fifteen (every rank of a thread once
 * whenever that thread gets ahead of the other), and the queued path's dozen
 * promises and closures per receive, each tagged by the fault-owner hooks,
 * lived long enough to be promoted: three times the old-space garbage of
 * --threads 1 (docs/benchmarks.md, "SimGrid side by side").
 */
class ParkedRecv extends RecvState implements Waiter {
  word: number;
  target = 0;
  readonly broadcast = false;
  settled = false;

  constructor(
    private readonly channel: InboundChannel,
    public op: ChannelOp<number>,
    ring: IpcqRingView,
    sender: number,
    dtype: DType,
    values: Float32Array,
    nbytes: number,
    t: number,
  ) {
    super(ring, sender, dtype, values, nbytes, t);
    this.word = ring.tailWord;
  }

  /** Reuse this object for the channel's next parked receive (a channel parks one at a time). */
  reset(op: ChannelOp<number>, ring: IpcqRingView, sender: number, dtype: DType, values: Float32Array, nbytes: number, t: number): void {
    this.op = op;
    this.ring = ring;
    this.sender = sender;
    this.dtype = dtype;
    this.values = values;
    this.nbytes = nbytes;
    this.t = t;
    this.got = 0;
    this.word = ring.tailWord;
  }

  resolve(): void {
    this.channel.resume(this);
  }

  reject(e: Error): void {
    this.channel.abandon(this, e);
  }
}

export class InboundChannel extends Channel {
  private readonly rings = new Map<number, IpcqRingView>();
  /** The parked receive in progress, if any (a receive queued behind it chains on its op). */
  private parked: ParkedRecv | undefined;
  /**
   * The last parked receive, finished: the next one reuses it. A rank that waits for
   * another thread holds its parked receive across young collections, so one made per
   * receive was promoted (decision 0035).
   */
  private spare: ParkedRecv | undefined;

  constructor(env: ThreadEnv, pe: number, dir: number) {
    super(env, pe, 4 + dir);
  }

  private ringFrom(sender: number, senderDir: number, set: number): IpcqRingView {
    const id = this.env.shared.layout.ringOf(sender, senderDir, set);
    let r = this.rings.get(id);
    if (!r) {
      r = ringView(this.env.shared, id);
      this.rings.set(id, r);
    }
    return r;
  }

  /**
   * Receive `out.length` elements of `dtype` from `sender` (which sends in
   * direction `senderDir` on the rings of channel set `set`) into `out`: the
   * time the last piece was read, as a number when every piece was already in
   * (the fast path), else an op that settles with it once `out` holds the values.
   */
  recv(sender: number, senderDir: number, set: number, dtype: DType, out: Float32Array, issuePs: number): ChannelOp<number> | number {
    const ring = this.ringFrom(sender, senderDir, set);
    const pieceBytes = this.pieceBytes(dtype);
    const nbytes = out.length * bytesPerElement(dtype);
    const pieces = Math.max(1, Math.ceil(nbytes / pieceBytes));
    if (this.idle && !this.env.sched.jitter) {
      const ctl = this.env.shared.ctl;
      if (Atomics.load(ctl, ring.tailWord) >= Atomics.load(ctl, ring.headWord) + pieces) {
        return this.recvNow(ring, sender, dtype, out, issuePs, pieces);
      }
      return this.park(ring, sender, dtype, out, issuePs, nbytes);
    }
    if (this.parked !== undefined) {
      // Behind a parked receive: the chain starts when it settles.
      this.tail = this.parked.op.promise.catch(() => undefined);
      this.parked = undefined;
    }
    return this.enqueue(() => this.run(ring, sender, dtype, out, issuePs));
  }

  /** Start a parked receive (the channel is idle): take what is in, park for the rest. */
  private park(ring: IpcqRingView, sender: number, dtype: DType, out: Float32Array, issuePs: number, nbytes: number): ChannelOp<number> {
    // RUNNING from the moment it is issued, as a queued operation (see enqueue).
    this.env.sched.setState(this.actor, ACTOR_STATE.RUNNING);
    const op = new ChannelOp<number>(this.channel, this.issued++);
    const t = Math.max(this.clock.nowPs, issuePs);
    let r = this.spare;
    if (r === undefined) r = new ParkedRecv(this, op, ring, sender, dtype, out, nbytes, t);
    else {
      this.spare = undefined;
      r.reset(op, ring, sender, dtype, out, nbytes, t);
    }
    this.parked = r;
    this.pump(r);
    return op;
  }

  /** @internal The piece a parked receive waited for is in. */
  resume(r: ParkedRecv): void {
    this.env.sched.unblock(this.actor);
    this.pump(r);
  }

  /** @internal The session aborted or stopped while `r` was parked. */
  abandon(r: ParkedRecv, e: Error): void {
    this.env.sched.unblock(this.actor);
    this.finish(r, e);
  }

  /** Take every piece of `r` that is in; park for the next one, or settle `r` when it has them all. */
  private pump(r: ParkedRecv): void {
    const { sched, shared } = this.env;
    const ring = r.ring;
    try {
      do {
        const k = Atomics.load(shared.ctl, ring.headWord);
        if (Atomics.load(shared.ctl, ring.tailWord) < k + 1) {
          ring.wantData(k);
          // Look again after wanting it: a producer on another thread rings only for a wanted piece.
          if (Atomics.load(shared.ctl, ring.tailWord) < k + 1) {
            r.target = k + 1;
            sched.parkWaiter(this.actor, r, WAIT_KIND.IPCQ_DATA, ring.ring, r.t);
            return;
          }
        }
        this.readPiece(r, k);
        this.freePiece(r, k);
      } while (r.got < r.nbytes);
    } catch (e) {
      this.finish(r, e);
      return;
    }
    this.clock.advanceTo(r.t);
    this.finish(r);
  }

  /** As the queued chain's end does (enqueue), then settle the op. */
  private finish(r: ParkedRecv, error?: unknown): void {
    if (this.parked === r) this.parked = undefined;
    this.settledCount++;
    Atomics.add(this.env.shared.ctl, this.doneWord, 1);
    if (this.idle) this.env.sched.setState(this.actor, ACTOR_STATE.IDLE);
    const op = r.op;
    // Out of the scheduler's lists (resumed or rejected), so free for the next parked receive.
    r.values = EMPTY_F32;
    this.spare = r;
    op.settle(r.t, error);
  }

  /** Every piece is in: decode straight from the slots, free them, publish head once. */
  private recvNow(ring: IpcqRingView, sender: number, dtype: DType, out: Float32Array, issuePs: number, pieces: number): number {
    const { env } = this;
    const bpe = bytesPerElement(dtype);
    const count = out.length;
    const head = Atomics.load(env.shared.ctl, ring.headWord);
    let t = Math.max(this.clock.nowPs, issuePs);
    let at = 0;
    for (let i = 0; i < pieces; i++) {
      const k = head + i;
      const bytes = ring.checkedBytes(k, sender, this.pe);
      this.checkSize(sender, count * bpe, at * bpe, bytes);
      const readyPs = t;
      const arrivalPs = ring.arrivalPs(k);
      t = Math.max(t, arrivalPs) + this.readPs(bytes);
      const n = bytes / bpe;
      if (env.plan.noData) {
        // timing-only mode: nothing to copy
      } else if (dtype === 'f32') out.set(ring.payloadF32(k, n), at);
      else decode(dtype, ring.payload(k, bytes), out.subarray(at, at + n));
      at += n;
      ring.setFreed(k, t);
      env.trace?.pieceIn(ring.ring, k, this.pe, DIRECTIONS[this.channel - 4], sender, bytes, readyPs, Math.max(0, arrivalPs - readyPs), t);
    }
    if (at !== count) this.checkSize(sender, count * bpe, at * bpe, 0, true);
    ring.publishHead(head + pieces);
    this.wake(ring.headWord, env.plan.peExecutor[sender], ring.creditWanted(head, head + pieces));
    this.clock.advanceTo(t);
    return t;
  }

  // Staging-buffer read time per piece size, memoised (pieces are mostly vc_chunk_size).
  private readBytes = -1;
  private readCostPs = 0;

  private readPs(bytes: number): number {
    if (bytes !== this.readBytes) {
      this.readBytes = bytes;
      this.readCostPs = this.env.costs.memoryPs(this.env.plan.ccl.buffer_kind, bytes);
    }
    return this.readCostPs;
  }

  /**
   * The queued path behind another operation, or under jitter: piece by piece as they
   * arrive, each decoded straight into `values` (left alone by the kernel until the
   * receive is waited for). A receive on an idle channel parks instead (park): the same
   * steps without a promise per piece.
   */
  private async run(ring: IpcqRingView, sender: number, dtype: DType, values: Float32Array, issuePs: number): Promise<number> {
    const { sched, shared } = this.env;
    const r = new RecvState(ring, sender, dtype, values, values.length * bytesPerElement(dtype), Math.max(this.clock.nowPs, issuePs));
    do {
      const k = Atomics.load(shared.ctl, ring.headWord);
      // Wait for the piece, unless it is in already (jitter mode always goes through the wait).
      if (sched.jitter || Atomics.load(shared.ctl, ring.tailWord) < k + 1) {
        ring.wantData(k);
        await sched.waitUntil(this.actor, ring.tailWord, k + 1, WAIT_KIND.IPCQ_DATA, ring.ring, r.t);
      }
      this.readPiece(r, k);
      if (sched.jitter) await sched.jitter.point();
      this.freePiece(r, k);
    } while (r.got < r.nbytes);
    this.clock.advanceTo(r.t);
    return r.t;
  }

  /** Piece `k` of `r` is in: check it, charge its read, decode it into place. */
  private readPiece(r: RecvState, k: number): void {
    const { ring, dtype } = r;
    const bytes = ring.checkedBytes(k, r.sender, this.pe);
    this.checkSize(r.sender, r.nbytes, r.got, bytes);
    r.bytes = bytes;
    r.readyPs = r.t;
    r.arrivalPs = ring.arrivalPs(k);
    r.t = Math.max(r.t, r.arrivalPs) + this.readPs(bytes);
    if (!this.env.plan.noData) {
      const bpe = bytesPerElement(dtype);
      const at = r.got / bpe;
      if (dtype === 'f32') r.values.set(ring.payloadF32(k, bytes / 4), at);
      else decode(dtype, ring.payload(k, bytes), r.values.subarray(at, at + bytes / bpe));
    }
    r.got += bytes;
  }

  /** Free piece `k`'s slot at the time it was read, hand its credit back, wake the sender. */
  private freePiece(r: RecvState, k: number): void {
    const { env } = this;
    const ring = r.ring;
    ring.setFreed(k, r.t);
    env.trace?.pieceIn(ring.ring, k, this.pe, DIRECTIONS[this.channel - 4], r.sender, r.bytes, r.readyPs, Math.max(0, r.arrivalPs - r.readyPs), r.t);
    ring.publishHead(k + 1);
    this.wake(ring.headWord, env.plan.peExecutor[r.sender], ring.creditWanted(k, k + 1));
  }

  private checkSize(sender: number, want: number, got: number, piece: number, short = false): void {
    if (short || got + piece > want) {
      throw new RangeError(`IPCQ receive of ${want} bytes from ${this.env.machine.describePe(sender)}: the sender's pieces do not add up, got ${short ? `only ${got} bytes` : `a piece of ${piece} bytes after ${got}`}`);
    }
  }
}

/** Bytes per piece for elements of `dt`: `vcChunkSize` rounded down to whole elements. */
function pieceBytesFor(vcChunkSize: number, dt: DType): number {
  const bpe = bytesPerElement(dt);
  return Math.max(bpe, Math.floor(vcChunkSize / bpe) * bpe);
}

/** The pieces a payload of `elements` elements of `dt` is cut into (the race check counts them: lib/race/log.ts). */
export function pieceCount(vcChunkSize: number, dt: DType, elements: number): number {
  return Math.max(1, Math.ceil((elements * bytesPerElement(dt)) / pieceBytesFor(vcChunkSize, dt)));
}

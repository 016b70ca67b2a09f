// Runs on: executor threads. Owns: a PE's inbound DMA channel for one
// direction: the rings it reads (one per sender and channel set), and a
// receive's three ways to run, which share one piece step (readPiece):
//   at once   every piece is in when the receive is issued on an idle channel (recvNow)
//   parked    issued on an idle channel before its pieces are in: a state machine
//             parked on the ring's tail between pieces (./recv-state.ts, ParkedRecv)
//   queued    behind another operation, or under jitter: a promise chain (run)
//
// Piece i of a receive:
//   channel clock = max(channel clock, issue time, arrival_i) + staging read(bytes_i)
//   freed_i   = channel clock                            (the credit leaves then)
// The at-once path is an optimisation of wall time only: the same step, in the
// same order, decoding straight from the slots.
import { bytesPerElement, decode, type DType } from '../dtype/index.js';
import { KernbenchError } from '../errors.js';
import { ACTOR_STATE, DIRECTIONS, WAIT_KIND } from '../shm/layout.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import { ChannelOp } from './channel-op.js';
import { Channel } from './channel-queue.js';
import { EMPTY_F32, ParkedRecv, RecvState, type ParkedRecvHost } from './recv-state.js';
import { peerRingView, ringView, type IpcqRingView } from './ring.js';

export class InboundChannel extends Channel implements ParkedRecvHost {
  /**
   * The ring of the last receive: a channel receives from one sender a kernel, so this is
   * the next receive's ring, and the thread's table of views (ringView) is asked only when
   * the sender changes (a Map a channel, looked up on every receive, was two more objects a
   * rank that every step of a collective reads; decision 0185).
   */
  private lastRing: IpcqRingView | undefined;
  /** The parked receive in progress, if any (a receive queued behind it chains on its op). */
  private parked: ParkedRecv | undefined;
  /**
   * The last parked receive, finished: the next one reuses it. A rank that waits for
   * another thread holds its parked receive across young collections, so one made per
   * receive was promoted (decision 0035).
   */
  private spare: ParkedRecv | undefined;
  /** The parked receive in progress has parked: the channel's actor is BLOCKED (or was, and is not IDLE yet). */
  private blocked = false;
  /** The state of a receive done at once (recvNow), reused: it ends before the call returns. */
  private now: RecvState | undefined;

  constructor(env: ThreadEnv, pe: number, dir: number) {
    super(env, pe, 4 + dir);
  }

  private ringFrom(sender: number, senderDir: number, set: number): IpcqRingView {
    const id = this.env.shared.layout.ringOf(sender, senderDir, set);
    const last = this.lastRing;
    if (last !== undefined && last.ring === id) return last;
    if (set < this.groupSets) return (this.lastRing = ringView(this.env.shared, id));
    // A peer set's ring is held here only (lib/ipcq/ring.ts peerRingView): this channel's one
    // view, pointed at the next peer's ring once no receive holds it (decision 0271).
    const mine = this.peerView;
    if (mine !== undefined && this.idle) {
      mine.retarget(id);
      return (this.lastRing = mine);
    }
    return (this.lastRing = this.peerView = peerRingView(this.env.shared, id));
  }
  /** The view of a peer ring this channel made last. */
  private peerView: IpcqRingView | undefined;

  /**
   * Receive `out.length` elements of `dtype` from `sender` (which sends in
   * direction `senderDir` on the rings of channel set `set`) into `out`: the
   * time the last piece was read, as a number when every piece was already in
   * (the fast path), else an op that settles with it once `out` holds the values.
   */
  recv(sender: number, senderDir: number, set: number, dtype: DType, out: Float32Array, issuePs: number): ChannelOp<number> | number {
    const ring = this.ringFrom(sender, senderDir, set);
    const nbytes = out.length * bytesPerElement(dtype);
    if (this.idle && !this.env.sched.jitter) {
      const pieces = Math.max(1, Math.ceil(nbytes / this.pieceBytes(dtype)));
      const head = this.env.shared.load(ring.headWord);
      if (ring.tailAtLeast(head + pieces)) {
        return this.recvNow(ring, head, sender, dtype, out, issuePs, nbytes, pieces);
      }
      return this.park(ring, sender, dtype, out, issuePs, nbytes);
    }
    if (this.parked !== undefined) {
      // Behind a parked receive: the chain starts when it settles.
      this.tail = this.parked.op.promise.catch(() => undefined);
      this.parked = undefined;
    }
    return this.recvQueued(ring, sender, dtype, out, issuePs);
  }

  /** Queue the receive behind the channel's others; a method of its own, as OutboundChannel.sendQueued is. */
  private recvQueued(ring: IpcqRingView, sender: number, dtype: DType, out: Float32Array, issuePs: number): ChannelOp<number> {
    return this.enqueue(() => this.run(ring, sender, dtype, out, issuePs));
  }

  /** A receive of `elements` from `sender` issued now would park: the channel is idle and not every piece is in. */
  wouldPark(sender: number, senderDir: number, set: number, dtype: DType, elements: number): boolean {
    if (!this.idle || this.env.sched.jitter) return false;
    const ring = this.ringFrom(sender, senderDir, set);
    const pieces = Math.max(1, Math.ceil((elements * bytesPerElement(dtype)) / this.pieceBytes(dtype)));
    return !ring.tailAtLeast(this.env.shared.load(ring.headWord) + pieces);
  }

  /** Every piece from `head` on is in: read them straight from the slots, free them, publish head once. */
  private recvNow(ring: IpcqRingView, head: number, sender: number, dtype: DType, out: Float32Array, issuePs: number, nbytes: number, pieces: number): number {
    const { env } = this;
    const t = Math.max(this.clock.nowPs, issuePs);
    let r = this.now;
    if (r === undefined) r = this.now = new RecvState(ring, sender, dtype, out, nbytes, t);
    else r.reset(ring, sender, dtype, out, nbytes, t);
    for (let k = head; k < head + pieces; k++) {
      this.readPiece(r, k);
      this.freeSlot(r, k);
    }
    r.values = EMPTY_F32;
    if (r.got !== nbytes) this.checkSize(sender, nbytes, r.got, 0, true);
    ring.publishHead(head + pieces);
    this.wake(ring.headWord, env.plan.peExecutor[sender], ring.creditWanted(head, head + pieces));
    this.clock.advanceTo(r.t);
    return r.t;
  }

  /** Start a parked receive (the channel is idle): take what is in, park for the rest. */
  private park(ring: IpcqRingView, sender: number, dtype: DType, out: Float32Array, issuePs: number, nbytes: number): ChannelOp<number> {
    // The channel's actor stays IDLE until the receive parks (BLOCKED, parkWaiter), and goes from
    // BLOCKED straight back to IDLE when it ends: its kernel is RUNNING meanwhile, so the deadlock
    // detector never sees it wait on an IDLE channel with work (decision 0155).
    const op = new ChannelOp<number>(this.channel, this.issued++);
    const t = Math.max(this.clock.nowPs, issuePs);
    let r = this.spare;
    if (r === undefined) r = new ParkedRecv(this, op, ring, sender, dtype, out, nbytes, t);
    else {
      this.spare = undefined;
      r.resetParked(op, ring, sender, dtype, out, nbytes, t);
    }
    this.parked = r;
    this.pump(r);
    return op;
  }

  /** @internal The piece a parked receive waited for is in. */
  resume(r: ParkedRecv): void {
    // Still BLOCKED, on a word that reached its target: parking again re-publishes the wait, finish the state.
    this.pump(r);
  }

  /** @internal The session aborted or stopped while `r` was parked. */
  abandon(r: ParkedRecv, e: Error): void {
    this.finish(r, e);
  }

  /** Take every piece of `r` that is in; park for the next one, or settle `r` when it has them all. */
  private pump(r: ParkedRecv): void {
    const { sched, shared } = this.env;
    const ring = r.ring;
    try {
      do {
        const k = Atomics.load(shared.ctl, ring.headWord);
        if (!ring.tailAtLeast(k + 1)) {
          ring.wantData(k);
          // Look again after wanting it: a producer on another thread rings only for a wanted piece
          // (tailAtLeast loads it: the value seen was short of k + 1).
          if (!ring.tailAtLeast(k + 1)) {
            r.target = k + 1;
            // Before parkWaiter: on an aborted session it rejects at once (abandon, finish).
            this.blocked = true;
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
    if (this.blocked) {
      // IDLE, or RUNNING for the receives queued behind this one (their chain ends IDLE: enqueue).
      this.blocked = false;
      this.env.sched.setState(this.actor, this.idle ? ACTOR_STATE.IDLE : ACTOR_STATE.RUNNING);
    }
    const op = r.op;
    // Out of the scheduler's lists (resumed or rejected), so free for the next parked receive.
    r.values = EMPTY_F32;
    this.spare = r;
    op.settle(r.t, error);
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
      if (sched.jitter || !ring.tailAtLeast(k + 1)) {
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

  /** Piece `k` of `r` is in: check it, charge its read, decode it into place. The receive's piece step, for all three paths. */
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

  /** Piece `k`'s slot is free from the time it was read (its credit leaves then). */
  private freeSlot(r: RecvState, k: number): void {
    r.ring.setFreed(k, r.t);
    this.env.trace?.pieceIn(r.ring.ring, k, this.pe, DIRECTIONS[this.channel - 4], r.sender, r.bytes, r.readyPs, Math.max(0, r.arrivalPs - r.readyPs), r.t);
  }

  /** Free piece `k`'s slot, hand its credit back, wake the sender. */
  private freePiece(r: RecvState, k: number): void {
    this.freeSlot(r, k);
    r.ring.publishHead(k + 1);
    this.wake(r.ring.headWord, this.env.plan.peExecutor[r.sender], r.ring.creditWanted(k, k + 1));
  }

  private checkSize(sender: number, want: number, got: number, piece: number, short = false): void {
    if (short || got + piece > want) {
      throw new KernbenchError('ERR_IPCQ_PIECES', `IPCQ receive of ${want} bytes from ${this.env.machine.describePe(sender)}: the sender's pieces do not add up, got ${short ? `only ${got} bytes` : `a piece of ${piece} bytes after ${got}`}`);
    }
  }
}

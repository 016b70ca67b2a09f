// Runs on: executor threads. Owns: a receive in progress on an inbound DMA
// channel (RecvState), and the parked receive (ParkedRecv): the scheduler's
// waiter for a receive's next piece, which hands control back to its channel
// (./inbound.ts) when the piece is in or the session stops.
import type { DType } from '../dtype/index.js';
import type { Waiter } from '../sync/scheduler.js';
import type { ChannelOp } from './channel-op.js';
import type { IpcqRingView } from './ring.js';
import { ZERO_PS } from '../time/virtual-time.js';

export const EMPTY_F32 = new Float32Array(0);

/**
 * A receive in progress: where its pieces come from and go, and how far it is
 * (the virtual time `t` its next piece is read from, the bytes `got` so far).
 */
export class RecvState {
  /** Bytes of the piece read last, when the channel was ready for it, and when it had arrived (for the piece's records). */
  bytes = 0;
  readyPs = ZERO_PS;
  arrivalPs = ZERO_PS;
  got = 0;
  /** A time field is a double from its first value (decision 0262): a parameter property's field starts undefined, and V8 then boxed every time stored in it. */
  t = ZERO_PS;

  constructor(
    public ring: IpcqRingView,
    public sender: number,
    public dtype: DType,
    public values: Float32Array,
    public nbytes: number,
    t: number,
  ) {
    this.t = t;
  }

  /** Start another receive with this object. */
  reset(ring: IpcqRingView, sender: number, dtype: DType, values: Float32Array, nbytes: number, t: number): void {
    this.ring = ring;
    this.sender = sender;
    this.dtype = dtype;
    this.values = values;
    this.nbytes = nbytes;
    this.t = t;
    this.got = 0;
  }
}

/** What a parked receive hands control back to: its channel. */
export interface ParkedRecvHost {
  /** The piece `r` waited for is in. */
  resume(r: ParkedRecv): void;
  /** The session aborted or stopped while `r` was parked. */
  abandon(r: ParkedRecv, e: Error): void;
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
 * --threads 1 (docs/benchmarks.md, "SimGrid side by side"; decision 0035).
 */
export class ParkedRecv extends RecvState implements Waiter {
  word: number;
  target = 0;
  readonly broadcast = false;
  settled = false;

  constructor(
    private readonly host: ParkedRecvHost,
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
  resetParked(op: ChannelOp<number>, ring: IpcqRingView, sender: number, dtype: DType, values: Float32Array, nbytes: number, t: number): void {
    this.op = op;
    this.reset(ring, sender, dtype, values, nbytes, t);
    this.word = ring.tailWord;
  }

  resolve(): void {
    this.host.resume(this);
  }

  reject(e: Error): void {
    this.host.abandon(this, e);
  }
}

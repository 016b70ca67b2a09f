// Runs on: executor threads. Owns: the handles `tl` gives for transfers in the
// background of a kernel: a send's (awaitable) and a pending receive's. They
// are part of the face (./context.ts): awaiting one asks the `tl` that made it.
import type { ChannelOp } from '../ipcq/channel-op.js';
import type { Tile } from '../tile/tile.js';
import { ZERO_PS } from '../time/virtual-time.js';

/** What a SendHandle asks of the `tl` that made it. */
export interface SendWaiter {
  /** Account for a send that has already completed. */
  waitSendNow(h: SendHandle): void;
  /** A promise-returning operation that settled as it was issued. */
  settledNow(op: string): void;
  /** Wait for a send. */
  waitSend(h: SendHandle): Promise<void>;
}

/**
 * A send: await it (or `tl.wait`) to continue once the last byte has left.
 * `op` is null when the send completed as it was issued (the fast path).
 */
export class SendHandle implements PromiseLike<void> {
  constructor(
    private readonly tl: SendWaiter,
    readonly op: ChannelOp<number> | null,
    /** Completion time when `op` is null. */
    readonly donePs: number,
    /** When `op` is null: the last byte's arrival (with shared links, the join floor of what the kernel does after waiting for it). */
    readonly arrivalPs = ZERO_PS,
  ) {}
  then<R1 = void, R2 = never>(ok?: ((v: void) => R1 | PromiseLike<R1>) | null, fail?: ((e: unknown) => R2 | PromiseLike<R2>) | null): PromiseLike<R1 | R2> {
    if (this.op === null && ok) {
      // Already sent: `await` resumes without another promise.
      this.tl.waitSendNow(this);
      this.tl.settledNow('await send');
      return Promise.resolve(ok());
    }
    return this.tl.waitSend(this).then(ok, fail);
  }
}

/** A pending receive (tl.recvAsync): `await tl.wait(f)` gives the tile. */
export class RecvFuture {
  constructor(
    /** Null when the receive completed as it was issued (the fast path). */
    readonly op: ChannelOp<number> | null,
    /** Completion time when `op` is null. */
    readonly donePs: number,
    /** Where the values land: the receive's `out` tile or a new one. Read it through `tl.wait`. */
    readonly tile: Tile,
  ) {}
  /** @internal The pieces to acquire when it completes (--check-races only; lib/race/log.ts). */
  raceKeys: string[] | null = null;
}

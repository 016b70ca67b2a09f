// Runs on: executor threads. Owns: ChannelOp, the record of one queued DMA
// channel operation (a send or a receive that did not complete as it was
// issued): its completion time once settled, or its error, and the promise a
// kernel waits on. The channels make and settle them (./channel-queue.ts); the
// kernel's transfer book keeps them until they are drained
// (lib/kernel/transfers.ts).
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

  /**
   * A send's last arrival at its receiver (its last byte left + the route's latency),
   * set by the outbound channel as it publishes the last piece (./outbound.ts);
   * -Infinity for a receive (a double, as the times it is compared with:
   * ZERO_PS, lib/time/virtual-time.ts). The kernel's link horizon reads it, rather
   * than adding the route's latency again.
   */
  arrivalPs = -Infinity;

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

// Runs on: executor threads. Owns: the transfers one flow of a kernel (its
// main flow, or a tl.parallel branch) has issued — the queued channel ops it
// must drain before it ends, the latest completion among those done at once —
// and, with shared links, its link horizon. Chosen once per flow
// (transfersFor): LinkedTransfers when the plan shares links, else Transfers.
//
// The link horizon (shared links only): a flow learns a send is done when its
// last byte left, before the link model has run to its arrival. So its later
// pieces enter their links no earlier than the latest arrival among the sends it
// waited for (horizonPs), and the flow ends no earlier than the latest arrival of
// any send it made: whatever its end wakes (a host, a launch) then acts after the
// link model has made them final (docs/determinism.md). A send's arrival is the
// outbound channel's (its op's arrivalPs, or the channel's lastArrivalPs for one
// done at once); nothing here adds a latency again.
import { KernbenchError } from '../errors.js';
import type { ChannelOp } from '../ipcq/channel-op.js';
import { WAIT_KIND } from '../shm/layout.js';
import type { Scheduler } from '../sync/scheduler.js';
import type { VirtualClock } from '../time/virtual-clock.js';
import { ZERO_PS } from '../time/virtual-time.js';

export class Transfers {
  /** Channel ops this flow queued (not those done at once), drained before it counts as finished. */
  private readonly issued: ChannelOp<number>[] = [];
  /** Ops in `issued` after its last compaction; the next one comes at twice as many (plus a few). */
  private compactedAt = 0;
  /** The latest completion among the transfers done at once: the flow ends no earlier. */
  private doneAtOncePs = ZERO_PS;
  /** The latest completion and arrival among the held sends not yet waited for (sentHeld). */
  private heldDonePs = ZERO_PS;
  private heldArrivalPs = ZERO_PS;

  constructor(
    /** The flow's clock: taking a settled op moves it. */
    protected readonly clock: VirtualClock,
    private readonly sched: Scheduler,
    /** The actor the flow waits as. */
    private readonly actor: number,
    /** The ctl word counting the settled ops of one of the PE's channels. */
    private readonly doneWord: (channel: number) => number,
  ) {}

  /** The earliest a piece of this flow may enter its links (0: links are not shared). */
  get horizonPs(): number {
    return 0;
  }

  /** A branch of this flow's tl.parallel starts: its pieces, like this flow's, enter their links after what this flow waited for. */
  inherit(_parent: Transfers): void {}

  /** A send completed as it was issued, at `donePs`; its last byte arrives at `arrivalPs`. */
  sentAtOnce(donePs: number, _arrivalPs: number): void {
    if (donePs > this.doneAtOncePs) this.doneAtOncePs = donePs;
  }

  /** A receive completed as it was issued, at `donePs`. */
  receivedAtOnce(donePs: number): void {
    if (donePs > this.doneAtOncePs) this.doneAtOncePs = donePs;
  }

  /** The flow waited for a send whose last byte arrives at `arrivalPs`. */
  sendWaited(_arrivalPs: number): void {}

  /**
   * A send done at once at `donePs` (arriving at `arrivalPs`) whose wait is held until
   * waitHeld (a ring step's: KernelContext.sendHeld). Waiting for several is waiting
   * for the latest of each time: the clock and the horizon only go forward.
   */
  sentHeld(donePs: number, arrivalPs: number): void {
    if (donePs > this.heldDonePs) this.heldDonePs = donePs;
    if (arrivalPs > this.heldArrivalPs) this.heldArrivalPs = arrivalPs;
  }

  /** Wait for the held sends, as awaiting each one's handle would. */
  waitHeld(): void {
    this.clock.advanceTo(this.heldDonePs);
    this.sendWaited(this.heldArrivalPs);
    this.heldDonePs = ZERO_PS;
    this.heldArrivalPs = ZERO_PS;
  }

  /** A settled op leaves the book (compaction or drain): a send's arrival still counts for the flow's end. */
  protected left(_op: ChannelOp<number>): void {}

  /**
   * Remember a queued op for drain. A long kernel queues one or two ops a step
   * (a ring all-reduce at p = 1024: ~2 000 per rank, each with its promises and
   * closures, all kept to the kernel's end: ~90 000 live ChannelOps on one
   * thread; docs/benchmarks.md, "Peak memory"). So every so often the list
   * drops the ops drain would pass over without effect: settled without error
   * at a time the flow's clock has reached already (drain would advance the
   * clock to it, a no-op, since clocks only go forward). Unsettled and failed
   * ops stay, in order, so drain waits and throws as it did.
   */
  track(op: ChannelOp<number>): void {
    const issued = this.issued;
    issued.push(op);
    if (issued.length < 2 * this.compactedAt + 16) return;
    const now = this.clock.nowPs;
    let kept = 0;
    for (const o of issued) {
      if (o.settled && o.error === undefined && (o.value as number) <= now) {
        this.left(o);
        continue;
      }
      issued[kept++] = o;
    }
    issued.length = kept;
    this.compactedAt = kept;
  }

  /**
   * A receive just waited for and taken into the clock is all drain would do
   * with it (a settled op at a time the clock has reached): drop it now when it
   * is the op tracked last, as it usually is. Left for the next compaction, a
   * ring step's parked receive (--threads 2: one in fifteen) lived through
   * several young collections with its op, promise and resolvers, and was
   * promoted.
   */
  untrack(op: ChannelOp<number>): void {
    const issued = this.issued;
    if (op.channel >= 4 && issued.length > 0 && issued[issued.length - 1] === op) issued.pop();
  }

  /** Wait for every transfer this flow started (the runtime does this when the kernel returns; tl.parallel when a branch does). */
  async drain(): Promise<void> {
    // Most ops settled long ago: only the others cost an await.
    for (const op of this.issued) {
      if (op.settled) this.take(op);
      else await this.settle(op);
      this.left(op);
    }
    this.clock.advanceTo(this.doneAtOncePs);
  }

  /** Wait for `op` (blocked as the flow's actor meanwhile), then take it. */
  async settle(op: ChannelOp<number>): Promise<number> {
    if (!op.settled) {
      if (op.index < 0) throw new KernbenchError('ERR_INTERNAL', 'an unsettled channel op without a queue index');
      this.block(op);
      try {
        await op.promise;
      } finally {
        this.sched.unblock(this.actor);
      }
    }
    return this.take(op);
  }

  /** Publish the flow's actor as blocked on `op` (the deadlock detector's view), until sched.unblock. */
  block(op: ChannelOp<number>): void {
    this.sched.block(this.actor, this.doneWord(op.channel), op.index + 1, WAIT_KIND.CHANNEL, op.channel, this.clock.nowPs);
  }

  /** A settled op's completion time; the flow's clock moves to it. Throws the op's error. */
  take(op: ChannelOp<number>): number {
    if (op.error !== undefined) throw op.error;
    const done = op.value as number;
    this.clock.advanceTo(done);
    return done;
  }
}

/** With shared links: the book above plus the flow's link horizon (see the header). */
class LinkedTransfers extends Transfers {
  /** The latest arrival of the sends this flow has waited for: its later pieces enter their links no earlier. */
  private waitedArrivePs = ZERO_PS;
  /** The latest arrival of every send this flow made: its end (drain) waits for it. */
  private sendsArrivePs = ZERO_PS;

  override get horizonPs(): number {
    return this.waitedArrivePs;
  }

  override inherit(parent: Transfers): void {
    this.waitedArrivePs = parent.horizonPs;
  }

  override sentAtOnce(donePs: number, arrivalPs: number): void {
    super.sentAtOnce(donePs, arrivalPs);
    // As drain does for a queued send: the flow ends after it arrived.
    this.sendsArrivePs = Math.max(this.sendsArrivePs, arrivalPs);
  }

  override sendWaited(arrivalPs: number): void {
    this.waitedArrivePs = Math.max(this.waitedArrivePs, arrivalPs);
  }

  protected override left(op: ChannelOp<number>): void {
    this.sendsArrivePs = Math.max(this.sendsArrivePs, op.arrivalPs);
  }

  override async drain(): Promise<void> {
    await super.drain();
    this.clock.advanceTo(Math.max(this.sendsArrivePs, this.waitedArrivePs));
  }
}

/** The transfer book of one flow: with a link horizon when links are shared. */
export function transfersFor(sharedLinks: boolean, clock: VirtualClock, sched: Scheduler, actor: number, doneWord: (channel: number) => number): Transfers {
  return sharedLinks ? new LinkedTransfers(clock, sched, actor, doneWord) : new Transfers(clock, sched, actor, doneWord);
}

// Runs on: executor threads. Owns: what a PE's DMA channel is whatever its
// direction: its virtual clock, its FIFO chain of queued operations and the
// count of those settled (a ctl word the kernel waits on), waking a ring's
// other end, and the cut of a payload into pieces.
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
import { bytesPerElement, type DType } from '../dtype/index.js';
import { ACTOR_STATE, PE } from '../shm/layout.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import { VirtualClock } from '../time/virtual-clock.js';
import { ChannelOp } from './channel-op.js';

export abstract class Channel {
  /** The DMA engine's virtual time: when it is free for the next transfer. */
  readonly clock = new VirtualClock();
  protected tail: Promise<unknown> = Promise.resolve();
  /** Queued (asynchronous) operations issued and settled; equal means idle. */
  protected issued: number;
  protected settledCount: number;
  protected readonly actor: number;
  readonly doneWord: number;
  /** Channel sets from this one on are peer sets (ccl.channel_sets; decision 0060): their rings are not kept a session (decision 0269). */
  protected readonly groupSets: number;

  constructor(
    protected readonly env: ThreadEnv,
    readonly pe: number,
    /** 0..3 outbound by direction, 4..7 inbound. */
    readonly channel: number,
  ) {
    const L = env.shared.layout;
    this.actor = L.channelActor(pe, channel);
    this.doneWord = L.pe(pe, PE.CHAN_DONE + channel);
    this.groupSets = env.plan.ccl.channel_sets;
    this.issued = Atomics.load(env.shared.ctl, this.doneWord);
    this.settledCount = this.issued;
  }

  get idle(): boolean {
    return this.settledCount === this.issued;
  }

  /** Queue `run` behind the channel's last operation; it gets the op it will settle. */
  protected enqueue<T>(run: (op: ChannelOp<T>) => Promise<T>): ChannelOp<T> {
    const sched = this.env.sched;
    // RUNNING from the moment work is queued, not from when the chain reaches
    // it: otherwise the deadlock detector could see a kernel waiting on an IDLE
    // channel whose operation is about to start, and call it a deadlock.
    if (this.idle) sched.setState(this.actor, ACTOR_STATE.RUNNING);
    const op = new ChannelOp<T>(this.channel, this.issued++);
    op.attach(
      this.tail.then(async () => {
        try {
          return await run(op);
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

  /**
   * After publishing `word` (a ring's tail or head): resolve the waiter at the
   * other end if it wants this, on this thread or another. Every wait on a
   * ring's tail or head announces what it wants first (./ring.ts), so `wanted` is
   * exact on this thread too, and a publish nobody waits for skips the thread's
   * table of waiters: with one or more waiters per rank in it, looking there cost
   * more per message as p grew (docs/decisions/0121-a-ring-publish-nobody-wants.md).
   */
  protected wake(word: number, executor: number, wanted: boolean): void {
    const sched = this.env.sched;
    if (executor !== sched.executor) {
      if (wanted) sched.ring(executor);
    } else if (wanted) sched.signal(word);
    else sched.signalNone();
  }

  /** Bytes per piece for elements of `dt`: vc_chunk_size rounded down to whole elements (kept for the last dtype asked). */
  protected pieceBytes(dt: DType): number {
    if (dt !== this.pieceDType) {
      this.pieceDType = dt;
      this.pieceBytesOf = pieceBytesFor(this.env.plan.ccl.vc_chunk_size, dt);
    }
    return this.pieceBytesOf;
  }
  private pieceDType: DType | undefined;
  private pieceBytesOf = 0;
}

/** Bytes per piece for elements of `dt`: `vcChunkSize` rounded down to whole elements. */
export function pieceBytesFor(vcChunkSize: number, dt: DType): number {
  const bpe = bytesPerElement(dt);
  return Math.max(bpe, Math.floor(vcChunkSize / bpe) * bpe);
}

/** The pieces a payload of `elements` elements of `dt` is cut into (the race check counts them: lib/race/log.ts). */
export function pieceCount(vcChunkSize: number, dt: DType, elements: number): number {
  return Math.max(1, Math.ceil((elements * bytesPerElement(dt)) / pieceBytesFor(vcChunkSize, dt)));
}

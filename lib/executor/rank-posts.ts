// Runs on: an executor thread, for one session. Owns: when a settled rank's
// outcome is posted to main.
//
// A rank's numpy() results move to main: their buffers are transferred, not
// copied (../host/moved-arrays.ts, decision 0031). Transferring a buffer
// detaches it, and the first detach in an isolate invalidates V8's
// ArrayBufferDetaching protector there: every optimised function that read a
// typed array on the promise that no buffer is ever detached is thrown away
// at once, and is compiled again with a detach check on each access. On a
// thread that runs many ranks, that was the message path of every rank still
// running, in the middle of its collective (decision 0266). So an outcome that
// moves buffers waits until no rank spawned on this thread is running, and
// goes then, with the others held; an outcome that moves nothing goes at once.
// Main waits for a spawn's ranks all together (Session.join), so holding one
// changes when main has it, not what a run does or returns.
import type { FromExecutor } from '../sync/messages.js';

/** A settled rank's message to main. */
type Outcome = Extract<FromExecutor, { type: 'rank-done' | 'rank-failed' }>;
/** Posts one outcome with its transfer list; throws when the value cannot be cloned (then `failed` reports the rank). */
type Post = (m: Outcome, transfer: ArrayBuffer[]) => void;

export class RankPosts {
  /** Ranks spawned on this thread that have not settled. */
  private running = 0;
  /** Settled outcomes that move buffers, waiting for `running` to reach 0, in the order they settled. */
  private held: { m: Outcome; transfer: ArrayBuffer[] }[] = [];

  constructor(
    private readonly post: Post,
    /** Rank `rank`'s outcome could not be posted (`e`, the clone error): report it failed instead. */
    private readonly failed: (rank: number, e: unknown) => void,
  ) {}

  /** A rank was spawned on this thread (before its code runs). */
  started(): void {
    this.running++;
  }

  /** A rank settled with outcome `m`, moving `transfer` (empty: nothing moves). */
  settled(m: Outcome, transfer: ArrayBuffer[]): void {
    this.running--;
    if (transfer.length === 0) this.send(m, transfer);
    else this.held.push({ m, transfer });
    if (this.running > 0) return;
    const held = this.held;
    this.held = [];
    for (const h of held) this.send(h.m, h.transfer);
  }

  private send(m: Outcome, transfer: ArrayBuffer[]): void {
    try {
      this.post(m, transfer);
    } catch (e) {
      this.failed(m.rank, e);
    }
  }
}

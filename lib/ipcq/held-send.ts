// Runs on: executor threads. Owns: a send waiting for its links on the fast path
// (HeldSend): the scheduler's waiter for the pass that releases its one piece, or
// for the link arbiter's answer, which hands control back to its channel
// (./outbound.ts) with the piece's sent time, or with the error that stopped the session.
import { HOLD } from '../sync/link-claims.js';
import type { Waiter } from '../sync/scheduler.js';
import type { ChannelOp } from './channel-op.js';
import { PieceTimes, type HeldLinks } from './link-timing.js';

/** What a held send hands control back to: its channel. */
export interface HeldSendHost {
  /** The piece of `h` left its links, its last byte at `sentPs`. */
  heldSent(h: HeldSend, sentPs: number): void;
  /** The session aborted or stopped while `h` was held, or its hand-over to the arbiter failed. */
  heldFailed(h: HeldSend, e: unknown): void;
}

/**
 * A one-piece send on an idle channel whose piece could not be proved alone at once:
 * held (decision 0100's hold, decision 0170's release), or, where other channels claim
 * its links, asked of the link arbiter. Its payload is in its slot already,
 * unpublished, and this waits on the piece's hold word for the pass that releases it
 * (or on the channel's flow-done word for the arbiter's answer), then publishes it
 * through its channel. The queued path's steps (OutboundChannel.run,
 * ClaimedLinks.cross) as a state machine: no promise chain, async frame or parked
 * promise a send, where a switched fabric's lock-step collective holds nearly every
 * piece. One a channel, reused: a channel holds one piece at a time.
 */
export class HeldSend implements Waiter {
  word = 0;
  target: number = HOLD.ALONE;
  /** Waiting for the link arbiter's answer (its links are claimed by others), not for a pass to release it. */
  arbitrated = false;
  readonly broadcast = false;
  settled = false;
  /** The piece's times, as the link timing was asked about them (its own copy: the channel's is rewritten by its next send). */
  readonly piece = new PieceTimes();
  op!: ChannelOp<number>;
  peer = 0;
  /** The channel's clock when the send was issued (the piece's records: its ready time before the credit). */
  fromPs = 0;
  /** How much later than `fromPs` its credit let it start (the piece's records). */
  creditWaitPs = 0;
  bytes = 0;

  constructor(
    private readonly host: HeldSendHost,
    private readonly links: HeldLinks,
  ) {}

  /** Start holding `op`'s piece to `peer` (its times in `piece`), or asking the arbiter for it: its word and target, published. */
  start(op: ChannelOp<number>, peer: number, piece: PieceTimes, fromPs: number, creditWaitPs: number, bytes: number, arbitrated: boolean): void {
    this.op = op;
    this.peer = peer;
    const p = this.piece;
    p.readyPs = piece.readyPs;
    p.serialPs = piece.serialPs;
    p.flightPs = piece.flightPs;
    p.joinNotBeforePs = piece.joinNotBeforePs;
    this.fromPs = fromPs;
    this.creditWaitPs = creditWaitPs;
    this.bytes = bytes;
    this.arbitrated = arbitrated;
    if (arbitrated) {
      this.target = this.links.request(peer, p);
      this.word = this.links.arbitratedWord;
    } else {
      this.target = HOLD.ALONE;
      this.word = this.links.hold(peer, p);
    }
  }

  resolve(): void {
    if (this.arbitrated) {
      this.host.heldSent(this, this.links.arbitratedSent());
      return;
    }
    let sent: number | Promise<number>;
    try {
      sent = this.links.heldSent(this.peer, this.piece, this.word);
    } catch (e) {
      this.host.heldFailed(this, e);
      return;
    }
    if (typeof sent === 'number') this.host.heldSent(this, sent);
    else
      sent.then(
        (t) => this.host.heldSent(this, t),
        (e: unknown) => this.host.heldFailed(this, e),
      );
  }

  reject(e: Error): void {
    this.host.heldFailed(this, e);
  }
}

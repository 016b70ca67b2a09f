// Runs on: executor threads. Owns nothing: the face of a PE's DMA channels,
// which carry IPCQ transfers in the background of the kernel, each on its own
// virtual timeline. Where each part lives (docs/decisions/0036-the-engine-in-rooms.md):
//   ./channel-op.ts     a queued operation, what a kernel waits on
//   ./channel-queue.ts  what every channel is: clock, FIFO chain, the cut into pieces
//   ./outbound.ts       sending, piece by piece; a piece's arrival
//   ./link-timing.ts    when a piece's last byte leaves, one implementation per link mode
//   ./held-send.ts      a one-piece send waiting for its links (a pass, or the link arbiter)
//   ./inbound.ts        receiving: at once, parked, or queued, through one piece step
//   ./recv-state.ts     a receive in progress; the parked receive
import { DIR_COUNT } from '../shm/layout.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import { InboundChannel } from './inbound.js';
import { OutboundChannel } from './outbound.js';

export { ChannelOp } from './channel-op.js';
export { pieceCount } from './channel-queue.js';
export { InboundChannel, OutboundChannel };

/**
 * A PE's DMA channels, one outbound and one inbound a direction, each built when a
 * kernel first uses it. A ring all-reduce sends east and receives from the west:
 * built eagerly, the six channels of the other directions were most of a rank's
 * IPCQ state (a channel, its clock, its FIFO tail, its link timing and its ring's
 * view, about 6 KB a rank at p = 1024; decision 0226). A channel reads what it
 * starts from (its settled count, its ring's tail) from the session's words, which
 * only it writes, so building it late starts it where building it early would have.
 */
export class PeChannels {
  private readonly out: (OutboundChannel | undefined)[] = new Array<OutboundChannel | undefined>(DIR_COUNT).fill(undefined);
  private readonly in: (InboundChannel | undefined)[] = new Array<InboundChannel | undefined>(DIR_COUNT).fill(undefined);

  constructor(
    private readonly env: ThreadEnv,
    private readonly pe: number,
  ) {}

  /** The outbound channel of direction `d`. */
  outbound(d: number): OutboundChannel {
    return this.out[d] ?? (this.out[d] = new OutboundChannel(this.env, this.pe, d));
  }

  /** The inbound channel of direction `d`. */
  inbound(d: number): InboundChannel {
    return this.in[d] ?? (this.in[d] = new InboundChannel(this.env, this.pe, d));
  }
}

// Runs on: executor threads. Owns nothing: the face of a PE's DMA channels,
// which carry IPCQ transfers in the background of the kernel, each on its own
// virtual timeline. Where each part lives (docs/decisions/0036-the-engine-in-rooms.md):
//   ./channel-op.ts     a queued operation, what a kernel waits on
//   ./channel-queue.ts  what every channel is: clock, FIFO chain, the cut into pieces
//   ./outbound.ts       sending, piece by piece; a piece's arrival
//   ./link-timing.ts    when a piece's last byte leaves, one implementation per link mode
//   ./inbound.ts        receiving: at once, parked, or queued, through one piece step
//   ./recv-state.ts     a receive in progress; the parked receive
export { ChannelOp } from './channel-op.js';
export { pieceCount } from './channel-queue.js';
export { InboundChannel } from './inbound.js';
export { OutboundChannel } from './outbound.js';

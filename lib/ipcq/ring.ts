// Runs on: executor threads (the sender PE's thread writes, the receiver PE's
// thread reads). Owns: the byte-level protocol of one IPCQ ring in the ipcq
// SharedArrayBuffer. Timing lives in ./channel.ts; this file only moves bytes
// and counters, in the order that makes them visible together.
//
//   ring r = (channel set, sender PE, sender direction), n_slots slots of SLOT.HEADER_BYTES + slot_size,
//   in its channel set's buffer (docs/decisions/0020-a-channel-set-per-process-group.md)
//
//        head (consumed)              tail (published)
//          v                            v
//   ... | m5 | m6 | m7 | m8 | (free) | (free) | ...     slot of message k = k mod n_slots
//          \__ readable: head <= k < tail __/
//
//   empty:  tail == head          full: tail - head == n_slots
//   sender may write message k once head >= k - n_slots + 1 (its credit);
//   receiver may read message k once tail >= k + 1.
//
// Publication order (DESIGN §5): the sender writes payload and header (bytes,
// arrival time, sender, receiver, seq) with plain stores, then Atomics.store(tail).
// The receiver Atomics.load(tail) before reading them, so payload and metadata
// become visible together. The receiver writes each slot's freed time, then
// Atomics.store(head) (once for a batch of slots): that pair is the credit.
//
// Byte offsets become typed-array indices with unsigned shifts (>>> 2, >>> 3): the
// buffer of one channel set may pass 2 GiB (1024 PEs x 4 rings x the ideal topologies' 8 x 64 KiB
// window), where a signed shift turns an offset negative. It must stay under 4 GiB; each set has its own.
import { KernbenchError } from '../errors.js';
import { RING, SLOT } from '../shm/layout.js';
import type { IpcqViews, SharedState } from '../shm/shared-state.js';

export interface PieceHeader {
  bytes: number;
  arrivalPs: number;
  sender: number;
  receiver: number;
}

export class IpcqRingView {
  readonly tailWord: number;
  readonly headWord: number;
  readonly dataWantWord: number;
  readonly creditWantWord: number;
  /** Its channel set's buffer. */
  private readonly buf: IpcqViews;
  /** Byte offset of its first slot in that buffer, and bytes per slot. */
  private readonly base: number;
  private readonly stride: number;

  /** Per slot: its payload as bytes and as f32 (made once; views are objects, the hot path makes none). */
  private readonly slotBytes: Uint8Array[] = [];
  private readonly slotF32: Float32Array[] = [];
  /** Per slot: the last f32 prefix asked for (pieces are mostly one size, so this is made once). */
  private readonly pieceF32: Float32Array[] = [];

  constructor(
    private readonly sh: SharedState,
    readonly ring: number,
  ) {
    const size = sh.layout.dims.slotSize;
    this.buf = sh.ipcq[sh.layout.setOfRing(ring)];
    this.base = sh.layout.slotOffset(ring, 0);
    this.stride = sh.layout.slotStride;
    for (let j = 0; j < sh.layout.dims.nSlots; j++) {
      const off = this.base + j * this.stride + SLOT.HEADER_BYTES;
      this.slotBytes.push(this.buf.u8.subarray(off, off + size));
      this.slotF32.push(this.buf.f32.subarray(off >>> 2, (off >>> 2) + (size >>> 2)));
    }
    this.tailWord = sh.layout.ring(ring, RING.TAIL);
    this.headWord = sh.layout.ring(ring, RING.HEAD);
    this.dataWantWord = sh.layout.ring(ring, RING.DATA_WANT);
    this.creditWantWord = sh.layout.ring(ring, RING.CREDIT_WANT);
  }

  get nSlots(): number {
    return this.sh.layout.dims.nSlots;
  }

  /** Byte offset of message `seq`'s slot in the set's buffer. */
  private offset(seq: number): number {
    return this.base + (seq % this.slotBytes.length) * this.stride;
  }

  /** The payload bytes of message `seq`'s slot (to write before publish, or to read after tail > seq). */
  payload(seq: number, n: number): Uint8Array {
    const whole = this.slotBytes[seq % this.slotBytes.length];
    return n === whole.length ? whole : whole.subarray(0, n);
  }

  /**
   * The payload of message `seq`'s slot as f32 (payloads are 8-byte aligned):
   * the whole slot, or its first `n` elements.
   */
  payloadF32(seq: number, n?: number): Float32Array {
    const j = seq % this.slotF32.length;
    const whole = this.slotF32[j];
    if (n === undefined || n === whole.length) return whole;
    let v = this.pieceF32[j];
    if (v === undefined || v.length !== n) v = this.pieceF32[j] = whole.subarray(0, n);
    return v;
  }

  /** Sender side: write message `seq`'s header (its payload is already in place), then publish it. */
  publish(seq: number, n: number, arrivalPs: number, sender: number, receiver: number): void {
    const off = this.offset(seq);
    this.buf.f64[(off + SLOT.ARRIVAL_PS) >>> 3] = arrivalPs;
    const i = this.buf.i32;
    i[(off + SLOT.BYTES) >>> 2] = n;
    i[(off + SLOT.SENDER) >>> 2] = sender;
    i[(off + SLOT.RECEIVER) >>> 2] = receiver;
    i[(off + SLOT.SEQ) >>> 2] = seq;
    Atomics.store(this.sh.ctl, this.tailWord, seq + 1);
  }

  /** Sender side: the virtual time at which the receiver freed message `seq` (valid once head > seq). */
  freedPs(seq: number): number {
    return this.buf.f64[(this.offset(seq) + SLOT.FREED_PS) >>> 3];
  }

  /**
   * Receiver side: the byte count of message `seq` (valid once tail > seq),
   * after checking its address — the sender and receiver PEs and the sequence
   * number, not the direction name, so a 2-rank ring works.
   */
  checkedBytes(seq: number, expectSender: number, expectReceiver: number): number {
    const off = this.offset(seq);
    const i = this.buf.i32;
    const sender = i[(off + SLOT.SENDER) >>> 2];
    const receiver = i[(off + SLOT.RECEIVER) >>> 2];
    const gotSeq = i[(off + SLOT.SEQ) >>> 2];
    if (sender !== expectSender || receiver !== expectReceiver || gotSeq !== seq) {
      throw new KernbenchError(
        'ERR_IPCQ_WIRING',
        `IPCQ ring ${this.ring} message ${seq}: expected PE ${expectSender} -> PE ${expectReceiver}, got PE ${sender} -> PE ${receiver} (seq ${gotSeq})`,
      );
    }
    return i[(off + SLOT.BYTES) >>> 2];
  }

  /** Receiver side: the virtual arrival time of message `seq` (valid once tail > seq). */
  arrivalPs(seq: number): number {
    return this.buf.f64[(this.offset(seq) + SLOT.ARRIVAL_PS) >>> 3];
  }

  /** Receiver side: header of message `seq` (valid once tail > seq), checked as by checkedBytes. */
  header(seq: number, expectSender: number, expectReceiver: number): PieceHeader {
    const bytes = this.checkedBytes(seq, expectSender, expectReceiver);
    return { bytes, arrivalPs: this.arrivalPs(seq), sender: expectSender, receiver: expectReceiver };
  }

  /** Receiver side: record when message `seq`'s slot was freed (its credit's departure time). */
  setFreed(seq: number, freedPs: number): void {
    this.buf.f64[(this.offset(seq) + SLOT.FREED_PS) >>> 3] = freedPs;
  }

  /** Receiver side: hand every slot below `head` back to the sender (after setFreed on each). */
  publishHead(head: number): void {
    Atomics.store(this.sh.ctl, this.headWord, head);
  }

  // Whole-message conveniences (one slot at a time), used by benches and tests.

  /** Sender side: copy src[from, from + n) into message `seq`'s slot and publish it. */
  write(seq: number, src: Uint8Array, from: number, n: number, h: Omit<PieceHeader, 'bytes'>): void {
    if (n > 0) this.payload(seq, n).set(src.subarray(from, from + n));
    this.publish(seq, n, h.arrivalPs, h.sender, h.receiver);
  }

  /** Receiver side: copy message `seq`'s payload into dst at `at`. */
  read(seq: number, n: number, dst: Uint8Array, at: number): void {
    if (n > 0) dst.set(this.payload(seq, n), at);
  }

  /** Receiver side: free message `seq`'s slot at virtual time `freedPs` (the credit). */
  free(seq: number, freedPs: number): void {
    this.setFreed(seq, freedPs);
    this.publishHead(seq + 1);
  }

  // Wake-ups across threads cost a notify each (DESIGN §8): a side that is
  // about to wait announces what it waits for, and the other side wakes a
  // remote thread only when it publishes exactly that. Dekker-style: the
  // waiter stores its want then loads the counter; the publisher stores the
  // counter then loads the want; with Atomics (sequentially consistent) at
  // least one of them sees the other.

  /** The receiver is about to wait for message `seq`. */
  wantData(seq: number): void {
    Atomics.store(this.sh.ctl, this.dataWantWord, seq + 1);
  }

  /** Did publishing tail (from `before` to `after`) give a waiting receiver what it wants? */
  dataWanted(before: number, after: number): boolean {
    const w = Atomics.load(this.sh.ctl, this.dataWantWord);
    return w > before && w <= after;
  }

  /** The sender is about to wait for head to reach `head`. */
  wantCredit(head: number): void {
    Atomics.store(this.sh.ctl, this.creditWantWord, head);
  }

  /** Did publishing head (from `before` to `after`) give a waiting sender what it wants? */
  creditWanted(before: number, after: number): boolean {
    const w = Atomics.load(this.sh.ctl, this.creditWantWord);
    return w > before && w <= after;
  }
}

// Runs on: executor threads (the sender PE's thread writes, the receiver PE's
// thread reads). Owns: the byte-level protocol of one IPCQ ring in the ipcq
// SharedArrayBuffer. Timing lives in ./channel.ts; this file only moves bytes
// and counters, in the order that makes them visible together.
//
//   ring r = (channel set, sender PE, sender direction), n_slots slots in its channel
//   set's buffer (docs/decisions/0020-a-channel-set-per-process-group.md). A slot is
//   a header with INLINE_PAYLOAD_BYTES after it, in the set's header region, and a
//   payload area of slot_size in its payload region: a message of up to
//   INLINE_PAYLOAD_BYTES goes inline, a larger one to the payload area, so a ring of
//   small messages touches the pages of its headers only (lib/shm/layout.ts).
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
// arrival time, sender, receiver, seq) with plain stores, then stores tail with
// sequentially consistent order (SharedState.store: Atomics.store's equivalent in
// WebAssembly, ../shm/ctl-load.ts). The receiver loads tail the same way before reading
// them, so payload and metadata become visible together. The receiver writes each
// slot's freed time, then stores head so (once for a batch of slots): that pair is the credit.
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

/**
 * The view of ring `ring` for this thread and session: one per ring, shared by its sender
 * and its receiver when both run here (a p = 1024 ring under --threads 1 made 5120 views,
 * each with its slots' views, where 4096 serve; decision 0034). A view holds its cached
 * slot views, which both sides ask for with the same sizes, and the tail and head this
 * thread last saw (both sides' lower bounds, so sharing them is sound; decision 0216).
 */
export function ringView(sh: SharedState, ring: number): IpcqRingView {
  let views = viewsOf.get(sh);
  if (views === undefined) viewsOf.set(sh, (views = new Map()));
  let v = views.get(ring);
  if (v === undefined) views.set(ring, (v = new IpcqRingView(sh, ring)));
  return v;
}
const viewsOf = new WeakMap<SharedState, Map<number, IpcqRingView>>();

/**
 * A view of ring `ring` that only its user holds, for a peer ring (decision 0060): an
 * all-to-all touches a ring for every ordered pair of ranks, p^2 in a run, each for a step
 * or two, and kept in the thread's table they were most of an executor's heap at large p
 * (decision 0269). A view holds only caches (its slots' views, lower bounds of the tail and
 * head), so two views of one ring on a thread are as sound as one.
 */
export function peerRingView(sh: SharedState, ring: number): IpcqRingView {
  return new IpcqRingView(sh, ring);
}

/** How many views of rings in sets from `fromSet` on this thread's table for the session keeps (tests). */
export function ringViewsKept(sh: SharedState, fromSet = 0): number {
  let n = 0;
  for (const ring of viewsOf.get(sh)?.keys() ?? []) if (sh.layout.setOfRing(ring) >= fromSet) n++;
  return n;
}

export class IpcqRingView {
  /** The ring viewed and its words: fixed, but for a peer ring's view its channel reuses (retarget). */
  ring: number;
  tailWord: number;
  headWord: number;
  dataWantWord: number;
  creditWantWord: number;
  /** Its channel set's buffer. */
  private buf: IpcqViews;
  /** Byte offset of its first slot in that buffer, and bytes from one of its slots to the next (ShmLayout.slotStep). */
  private base: number;
  private readonly stride: number;

  /**
   * Per slot, made on first use: its payload area and its inline bytes as bytes, and the
   * f32 view of its last message in each (pieces are mostly one size, so each is made
   * once). Views are objects: the hot path makes none, and a ring or slot nobody uses
   * makes none at all (made ahead for every ring, 4 per slot with the inline ones, they
   * took the p = 1024 `--no-data` ring's peak from 189 to 215 MiB under --threads 1).
   */
  private readonly slotBytes: Uint8Array[] = [];
  private readonly inlineBytes: Uint8Array[] = [];
  private readonly slotF32: Float32Array[] = [];
  private readonly inlineF32: Float32Array[] = [];
  private readonly slots: number;
  /** Payload bytes inline after a header, and in a payload area (inlineLen when the slots have no payload area). */
  private readonly inlineLen: number;
  private readonly areaLen: number;
  /**
   * Tail and head as this thread last read or wrote them: lower bounds, since both only
   * rise. A check that they cover a count needs no load when the last value seen does
   * (tailAtLeast, headAtLeast): a load of a shared word costs a call (decisions 0216,
   * 0278).
   */
  private seenTail = 0;
  private seenHead = 0;

  constructor(
    private readonly sh: SharedState,
    ring: number,
  ) {
    const L = sh.layout;
    this.ring = ring;
    this.buf = sh.ipcq[L.setOfRing(ring)];
    this.base = L.slotOffset(ring, 0);
    this.stride = L.slotStep;
    this.slots = L.dims.nSlots;
    this.inlineLen = L.inlineBytes;
    this.areaLen = L.payloadStride === 0 ? L.inlineBytes : L.dims.slotSize;
    this.tailWord = L.ring(ring, RING.TAIL);
    this.headWord = L.ring(ring, RING.HEAD);
    this.dataWantWord = L.ring(ring, RING.DATA_WANT);
    this.creditWantWord = L.ring(ring, RING.CREDIT_WANT);
  }

  /**
   * View ring `ring` instead, its caches dropped: a peer ring's view (peerRingView), which
   * its channel reuses for its next peer once nothing of its own uses it (decision 0271).
   * Never a view of the thread's table (ringView): others hold those.
   */
  retarget(ring: number): void {
    const L = this.sh.layout;
    this.ring = ring;
    this.buf = this.sh.ipcq[L.setOfRing(ring)];
    this.base = L.slotOffset(ring, 0);
    this.tailWord = L.ring(ring, RING.TAIL);
    this.headWord = L.ring(ring, RING.HEAD);
    this.dataWantWord = L.ring(ring, RING.DATA_WANT);
    this.creditWantWord = L.ring(ring, RING.CREDIT_WANT);
    // A length store is a runtime call: only where a slot's view was made.
    if (this.slotBytes.length !== 0) this.slotBytes.length = 0;
    if (this.inlineBytes.length !== 0) this.inlineBytes.length = 0;
    if (this.slotF32.length !== 0) this.slotF32.length = 0;
    if (this.inlineF32.length !== 0) this.inlineF32.length = 0;
    this.seenTail = 0;
    this.seenHead = 0;
  }

  /** Byte offset of slot j's inline payload (after its header), or of its payload area. */
  private payloadAt(j: number, inline: boolean): number {
    const L = this.sh.layout;
    return inline || L.payloadStride === 0 ? this.base + j * this.stride + SLOT.HEADER_BYTES : L.payloadOffset(this.ring, j);
  }

  get nSlots(): number {
    return this.slots;
  }

  /** Byte offset of message `seq`'s slot (its header) in the set's buffer. */
  private offset(seq: number): number {
    return this.base + (seq % this.slots) * this.stride;
  }

  /**
   * The `n` payload bytes of message `seq` (to write before publish, or to read after
   * tail > seq): inline after its header when they fit there, else in its slot's payload
   * area. Writer and reader agree, since both know n (the reader from the header).
   */
  payload(seq: number, n: number): Uint8Array {
    const j = seq % this.slots;
    const inline = n <= this.inlineLen;
    const len = inline ? this.inlineLen : this.areaLen;
    const views = inline ? this.inlineBytes : this.slotBytes;
    let whole = views[j];
    if (whole === undefined) {
      const at = this.payloadAt(j, inline);
      whole = views[j] = this.buf.u8.subarray(at, at + len);
    }
    return n === whole.length ? whole : whole.subarray(0, n);
  }

  /** The `n` f32 elements of message `seq`'s payload (payloads are 8-byte aligned), where payload(seq, 4 n) puts them. */
  payloadF32(seq: number, n: number): Float32Array {
    const j = seq % this.slots;
    const inline = n * 4 <= this.inlineLen;
    const views = inline ? this.inlineF32 : this.slotF32;
    let v = views[j];
    if (v === undefined || v.length !== n) {
      const at = this.payloadAt(j, inline) >>> 2;
      v = views[j] = this.buf.f32.subarray(at, at + n);
    }
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
    this.sh.store(this.tailWord, seq + 1);
    this.seenTail = seq + 1;
  }

  /** Has the sender published message `n - 1` (tail >= n)? Loads tail only when the last value seen is short of n. */
  tailAtLeast(n: number): boolean {
    if (this.seenTail >= n) return true;
    const t = this.sh.load(this.tailWord);
    this.seenTail = t;
    return t >= n;
  }

  /** Has the receiver freed message `n - 1` (head >= n)? Loads head only when the last value seen is short of n. */
  headAtLeast(n: number): boolean {
    if (this.seenHead >= n) return true;
    const h = this.sh.load(this.headWord);
    this.seenHead = h;
    return h >= n;
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
    this.sh.store(this.headWord, head);
    this.seenHead = head;
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
    const w = this.sh.load(this.dataWantWord);
    return w > before && w <= after;
  }

  /** The sender is about to wait for head to reach `head`. */
  wantCredit(head: number): void {
    Atomics.store(this.sh.ctl, this.creditWantWord, head);
  }

  /** Did publishing head (from `before` to `after`) give a waiting sender what it wants? */
  creditWanted(before: number, after: number): boolean {
    const w = this.sh.load(this.creditWantWord);
    return w > before && w <= after;
  }
}

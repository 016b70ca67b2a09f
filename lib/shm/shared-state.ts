// Runs on: any thread. Owns: the typed views over one session's
// SharedArrayBuffers. Main creates the buffers; every other thread attaches
// to the same ones (SharedArrayBuffers are shared, not copied, when posted).
import { KernbenchError, fitSerializedError, serializeError, utf8Bytes, type SerializedError } from '../errors.js';
import { ctlBuffer, wordAccess, type CtlMemory, type WordAdd, type WordLoad, type WordStore } from './ctl-load.js';
import { EXEC, KERNEL_NAME_BYTES, ShmLayout, type LayoutDims } from './layout.js';

export interface SharedBuffers {
  ctl: SharedArrayBuffer;
  /** `ctl` as a shared WebAssembly memory (./ctl-load.ts), posted with it; null without WebAssembly. */
  ctlMemory: CtlMemory | null;
  times: SharedArrayBuffer;
  /** One buffer per channel set (ShmLayout.channelSets): each stays under 4 GiB, and a set's pages cost memory only once used. */
  ipcq: SharedArrayBuffer[];
  arena: SharedArrayBuffer;
  cmd: SharedArrayBuffer;
}

/** Typed views over one channel set's IPCQ buffer. */
export interface IpcqViews {
  u8: Uint8Array;
  f64: Float64Array;
  i32: Int32Array;
  f32: Float32Array;
}

export class SharedState {
  readonly ctl: Int32Array;
  /** A `ctl` word, loaded as Atomics.load does, more cheaply (./ctl-load.ts): for the message path's hottest loads. */
  readonly load: WordLoad;
  /** A `ctl` word, stored as Atomics.store does, more cheaply (./ctl-load.ts): for the message path's hottest stores. */
  readonly store: WordStore;
  /** Add to a `ctl` word as Atomics.add does (its value before), more cheaply (./ctl-load.ts): for the actors' state changes. */
  readonly add: WordAdd;
  readonly times: Float64Array;
  /** Per channel set: its IPCQ slots as bytes, f64, i32 and f32 (lib/ipcq/ring.ts). */
  readonly ipcq: IpcqViews[];
  readonly arena: Uint8Array;
  readonly cmd: Uint8Array;

  constructor(
    readonly layout: ShmLayout,
    readonly buffers: SharedBuffers,
  ) {
    this.ctl = new Int32Array(buffers.ctl);
    ({ load: this.load, store: this.store, add: this.add } = wordAccess(buffers.ctlMemory, this.ctl));
    this.times = new Float64Array(buffers.times);
    this.ipcq = buffers.ipcq.map((b) => ({ u8: new Uint8Array(b), f64: new Float64Array(b), i32: new Int32Array(b), f32: new Float32Array(b) }));
    this.arena = new Uint8Array(buffers.arena);
    this.cmd = new Uint8Array(buffers.cmd);
  }

  static create(dims: LayoutDims): SharedState {
    const layout = new ShmLayout(dims);
    const ctl = ctlBuffer(layout.ctlWords);
    const sh = new SharedState(layout, {
      ctl: ctl.buffer,
      ctlMemory: ctl.memory,
      times: new SharedArrayBuffer(layout.timesWords * 8),
      ipcq: Array.from({ length: layout.channelSets }, () => new SharedArrayBuffer(Math.max(8, layout.ipcqSetBytes))),
      // Growable with its size as its maximum: V8 reserves it and commits pages as they are
      // touched, so an arena of 1 GiB, mostly untouched, is not counted against the machine's
      // commit limit; as a plain one it was, each session's until every isolate collected it,
      // and a process of many sessions could no longer fork (decision 0268).
      arena: new SharedArrayBuffer(dims.arenaBytes, { maxByteLength: dims.arenaBytes }),
      cmd: new SharedArrayBuffer(layout.cmdBytes),
    });
    // No PE has a kernel yet (lib/sync/pe-floor.ts): before any thread attaches.
    sh.times.fill(-Infinity, layout.floor(0), layout.floor(dims.pes));
    return sh;
  }

  static attach(dims: LayoutDims, buffers: SharedBuffers): SharedState {
    return new SharedState(new ShmLayout(dims), buffers);
  }

  /**
   * Write an error into the error slot of `pe` (-1: the abort's report), as
   * length-prefixed UTF-8 JSON. An error too large for the slot is shortened by
   * fitSerializedError, never cut mid-JSON, so readErrorSlot always gets back
   * the error's name, code, kernel, PE and time.
   */
  writeErrorSlot(pe: number, slot: ErrorSlot): void {
    const off = this.layout.errorOffset(pe);
    const capacity = this.layout.errorSlotBytes(pe) - 4;
    // The wrapper's own bytes (`{"error":...,"atPs":...}`) are counted before the error is fitted.
    const wrapper = utf8Bytes(JSON.stringify({ ...slot, error: null }));
    const fitted: ErrorSlot = { ...slot, error: fitSerializedError(slot.error, capacity - wrapper) };
    const bytes = new TextEncoder().encode(JSON.stringify(fitted));
    if (bytes.length > capacity) throw new KernbenchError('ERR_INTERNAL', `error slot ${pe}: a fitted error still takes ${bytes.length} bytes, more than the ${capacity} it holds`);
    new DataView(this.buffers.cmd).setUint32(off, bytes.length, true);
    this.cmd.set(bytes, off + 4);
  }

  /** The error last written to the slot of `pe` (-1: the abort's report), or undefined if none. Never throws. */
  readErrorSlot(pe: number): ErrorSlot | undefined {
    const off = this.layout.errorOffset(pe);
    const len = new DataView(this.buffers.cmd).getUint32(off, true);
    if (len === 0) return undefined;
    try {
      const slot = JSON.parse(new TextDecoder().decode(this.cmd.slice(off + 4, off + 4 + len))) as Partial<ErrorSlot>;
      const e = slot.error;
      if (e && typeof e.name === 'string' && typeof e.message === 'string' && e.fields && typeof e.fields === 'object') return slot as ErrorSlot;
      throw new KernbenchError('ERR_INTERNAL', `not a serialized error: ${JSON.stringify(slot).slice(0, 200)}`);
    } catch (e) {
      return { error: serializeError(new KernbenchError('ERR_INTERNAL', `error slot ${pe} holds ${len} bytes that are not a readable error: ${(e as Error).message}`)) };
    }
  }
}

/** Publish the name of the kernel PE `pe` starts (cut to KERNEL_NAME_BYTES); read only by a stopped run's report. */
export function writeKernelName(sh: SharedState, pe: number, name: string): void {
  const off = sh.layout.kernelNameOffset(pe);
  const bytes = new TextEncoder().encode(name).subarray(0, KERNEL_NAME_BYTES - 1);
  sh.cmd[off] = bytes.length;
  sh.cmd.set(bytes, off + 1);
}

/** The name PE `pe` last published with writeKernelName ('' if none). */
export function readKernelName(sh: SharedState, pe: number): string {
  const off = sh.layout.kernelNameOffset(pe);
  return new TextDecoder().decode(sh.cmd.slice(off + 1, off + 1 + sh.cmd[off])); // a copy: TextDecoder refuses shared memory
}

/** What an error slot holds: the error, and for a kernel's error the PE's virtual time when it was raised. */
export interface ErrorSlot {
  error: SerializedError;
  atPs?: number;
}

/**
 * Every thread's state changes so far: the sum of the EXEC.STATE_EPOCH words (main's included).
 * Each word only goes up, so two equal sums mean no word moved between their reads.
 *
 * Only the words of threads named in the epochs' summary are read: a thread's bit is set
 * before its word first moves (countStateChange) and never cleared in the session, so a
 * thread not named had a zero word when the summary was read, before this sum's other
 * reads: as if its word had been read then. A sum that skips it may miss a change the
 * thread makes after the summary read, but such a change's state store comes after it, so
 * after every state a snapshot read before its second sum: what it read stands. The sessions
 * this saves reads in have idle threads (--threads pe or rank with PEs or ranks that run
 * nothing), where the sum read a word for each (decision 0256).
 */
export function stateEpoch(sh: SharedState): number {
  const L = sh.layout;
  const ctl = sh.ctl;
  const summary0 = L.epochSummaryWord(0);
  let sum = 0;
  for (let si = 0; si < L.epochSummaryWords; si++) {
    let bits = Atomics.load(ctl, summary0 + si);
    while (bits !== 0) {
      const low = bits & -bits;
      bits ^= low;
      sum += Atomics.load(ctl, L.exec(si * 32 + (31 - Math.clz32(low)), EXEC.STATE_EPOCH));
    }
  }
  return sum;
}

/**
 * Count a state change of thread `e`: its bit in the epochs' summary, then its EXEC.STATE_EPOCH
 * (stateEpoch). The Scheduler calls this for its thread's first change only, then adds alone.
 */
export function countStateChange(sh: SharedState, e: number): void {
  Atomics.or(sh.ctl, sh.layout.epochSummaryWord(e), 1 << (e & 31));
  Atomics.add(sh.ctl, sh.layout.exec(e, EXEC.STATE_EPOCH), 1);
}

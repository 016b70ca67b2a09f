// Runs on: any thread. Owns: the typed views over one session's
// SharedArrayBuffers. Main creates the buffers; every other thread attaches
// to the same ones (SharedArrayBuffers are shared, not copied, when posted).
import { ShmLayout, type LayoutDims } from './layout.js';

export interface SharedBuffers {
  ctl: SharedArrayBuffer;
  times: SharedArrayBuffer;
  ipcq: SharedArrayBuffer;
  arena: SharedArrayBuffer;
  cmd: SharedArrayBuffer;
}

export class SharedState {
  readonly ctl: Int32Array;
  readonly times: Float64Array;
  readonly ipcq: Uint8Array;
  readonly ipcqF64: Float64Array;
  readonly ipcqI32: Int32Array;
  readonly ipcqF32: Float32Array;
  readonly arena: Uint8Array;
  readonly cmd: Uint8Array;

  constructor(
    readonly layout: ShmLayout,
    readonly buffers: SharedBuffers,
  ) {
    this.ctl = new Int32Array(buffers.ctl);
    this.times = new Float64Array(buffers.times);
    this.ipcq = new Uint8Array(buffers.ipcq);
    this.ipcqF64 = new Float64Array(buffers.ipcq);
    this.ipcqI32 = new Int32Array(buffers.ipcq);
    this.ipcqF32 = new Float32Array(buffers.ipcq);
    this.arena = new Uint8Array(buffers.arena);
    this.cmd = new Uint8Array(buffers.cmd);
  }

  static create(dims: LayoutDims): SharedState {
    const layout = new ShmLayout(dims);
    return new SharedState(layout, {
      ctl: new SharedArrayBuffer(layout.ctlWords * 4),
      times: new SharedArrayBuffer(layout.timesWords * 8),
      ipcq: new SharedArrayBuffer(Math.max(8, layout.ipcqBytes)),
      arena: new SharedArrayBuffer(dims.arenaBytes),
      cmd: new SharedArrayBuffer(layout.cmdBytes),
    });
  }

  static attach(dims: LayoutDims, buffers: SharedBuffers): SharedState {
    return new SharedState(new ShmLayout(dims), buffers);
  }

  /** Write a length-prefixed UTF-8 JSON value into the error area of `pe` (-1: coordinator report). */
  writeErrorSlot(pe: number, value: unknown, capacity: number): void {
    const off = this.layout.errorOffset(pe);
    let bytes = new TextEncoder().encode(JSON.stringify(value));
    if (bytes.length > capacity - 4) bytes = new TextEncoder().encode(JSON.stringify({ truncated: String(JSON.stringify(value)).slice(0, capacity / 2) }));
    new DataView(this.buffers.cmd).setUint32(off, bytes.length, true);
    this.cmd.set(bytes, off + 4);
  }

  readErrorSlot(pe: number): unknown {
    const off = this.layout.errorOffset(pe);
    const len = new DataView(this.buffers.cmd).getUint32(off, true);
    if (len === 0) return undefined;
    return JSON.parse(new TextDecoder().decode(this.cmd.slice(off + 4, off + 4 + len)));
  }
}

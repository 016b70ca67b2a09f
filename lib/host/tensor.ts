// Runs on: a host thread. Owns: Tensor, the host's handle on device memory
// (or on host memory, for tensors made by torch.fromArray), and the host-read
// barrier (seed D0.5): every member that lets the host observe device memory
// drains this host's pending launches first. Those members are listed once, in
// HOST_READ_BARRIERS; a test checks that the list is closed.
import { inspect } from 'node:util';
import { bytesPerElement, decode, encode, encodeDecode, isDType, type DType } from '../dtype/index.js';
import { KernbenchError } from '../errors.js';
import type { ShardDesc, SpaceName, TensorDesc } from '../shm/tensor-desc.js';
import { allocate } from '../shm/allocator.js';
import { DPPolicy } from './dp-policy.js';
import type { HostRuntime } from './host-runtime.js';
import { raceLog } from '../race/log.js';
import { madeForHost } from './moved-arrays.js';

/** What numpy() returns: a row-major copy of the whole tensor as f32 values. */
export interface HostArray {
  shape: number[];
  dtype: DType;
  data: Float32Array;
}

/**
 * Every Tensor member that reads device memory, and whether it can wait.
 * `async` members drain pending launches (await). `sync` members cannot wait:
 * they read when nothing is pending and otherwise throw ERR_HOST_READ_PENDING,
 * telling the caller to await numpy() or torch.synchronize() first.
 * The target side of copy_ is deliberately not here (seed D0.5).
 */
export const HOST_READ_BARRIERS = {
  numpy: 'async',
  data: 'async',
  item: 'async',
  at: 'sync',
  toString: 'sync',
  [inspect.custom]: 'sync',
  copy_: 'async (source side)',
} as const;

export interface TensorOptions {
  dtype?: DType;
  dp?: DPPolicy;
  /** Memory space of the shards (default hbm). */
  space?: SpaceName;
  name?: string;
}

export class Tensor {
  /** Set for device tensors. */
  readonly desc: TensorDesc | undefined;
  /** Set for host tensors (torch.fromArray). */
  private readonly hostValues: Float32Array | undefined;

  private constructor(
    private readonly host: HostRuntime,
    readonly shape: number[],
    readonly dtype: DType,
    readonly name: string,
    desc: TensorDesc | undefined,
    hostValues: Float32Array | undefined,
  ) {
    this.desc = desc;
    this.hostValues = hostValues;
  }

  /** Allocate a device tensor on the host's current device under `dp` (zero-filled: the arena starts zeroed and is never reused within a session). */
  static device(host: HostRuntime, shape: readonly number[], opts: TensorOptions = {}): Tensor {
    const dtype = checkDType(opts.dtype ?? 'f32');
    const sh = checkShape(shape);
    const [rows, cols] = as2d(sh);
    const dp = opts.dp ?? new DPPolicy();
    const space = opts.space ?? 'hbm';
    const m = host.env.machine;
    if (dp.numCubes > m.cubesPerSip) throw new KernbenchError('ERR_DPPOLICY_TOO_WIDE', `${dp} places shards on more cubes than a SIP has (${m.cubesPerSip}), got numCubes ${dp.numCubes}`);
    if (dp.numPes > m.pesPerCube) throw new KernbenchError('ERR_DPPOLICY_TOO_WIDE', `${dp} places shards on more PEs than a cube has (${m.pesPerCube}), got numPes ${dp.numPes}`);
    const bpe = bytesPerElement(dtype);
    const shards: ShardDesc[] = dp.place(rows, cols).map((p) => {
      const where = { sip: host.device, cube: p.cube, pe: p.pe, space };
      const nbytes = p.rows[1] * p.cols[1] * bpe;
      const a = allocate(host.env.shared, m, where, nbytes);
      return { ...where, arenaOffset: a.arenaOffset, deviceOffset: a.deviceOffset, nbytes, rows: p.rows, cols: p.cols };
    });
    const name = opts.name ?? 'tensor';
    return new Tensor(host, sh, dtype, name, { kind: 'tensor', name, dtype, shape: sh, shards }, undefined);
  }

  /** A host tensor holding `values` (torch.fromArray), rounded to `dtype`. */
  static hostArray(host: HostRuntime, values: ArrayLike<number>, shape: readonly number[], dtype: DType): Tensor {
    const sh = checkShape(shape);
    const n = sh.reduce((a, b) => a * b, 1);
    if (values.length !== n) throw new KernbenchError('ERR_VALUE_COUNT_MISMATCH', `fromArray: shape [${sh.join(', ')}] needs ${n} values, got ${values.length}`);
    // Timing-only mode keeps no values: a host tensor only feeds copy_, which moves none.
    if (host.env.plan.noData) return new Tensor(host, sh, dtype, 'host', undefined, undefined);
    return new Tensor(host, sh, dtype, 'host', undefined, encodeDecode(dtype, values, new Float32Array(n)));
  }

  /** Does this tensor live in `host`'s device memory (and not in memory a failed spawn discarded)? */
  ownedBy(host: HostRuntime): boolean {
    return this.host === host;
  }

  get isDevice(): boolean {
    return this.desc !== undefined;
  }

  get numel(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }

  /**
   * Gather every shard into one row-major array. Host-read barrier: drains pending launches first.
   * The array is fresh, its caller's alone: a spawned rank that returns it moves it to main
   * instead of copying it (./moved-arrays.ts).
   */
  async numpy(): Promise<HostArray> {
    if (this.desc) await this.host.drain(); // host tensors read no device memory
    const a = this.readNow();
    madeForHost(a.data);
    return a;
  }

  /** PyTorch's `.data` read as values (same as numpy()). */
  get data(): Promise<HostArray> {
    return this.numpy();
  }

  /** The single value of a one-element tensor. */
  async item(): Promise<number> {
    if (this.numel !== 1) throw new KernbenchError('ERR_SHAPE_MISMATCH', `item() needs a one-element tensor, got shape [${this.shape.join(', ')}]`);
    return (await this.numpy()).data[0];
  }

  /** Element at a row-major flat index; synchronous, so it refuses while launches are pending. */
  at(index: number): number {
    this.syncBarrier('at');
    const a = this.readNow();
    if (!Number.isInteger(index) || index < 0 || index >= a.data.length) throw new KernbenchError('ERR_INDEX_OUT_OF_RANGE', `index must be in [0, ${a.data.length}), got ${index}`);
    return a.data[index];
  }

  /** Copy `src` (host or device tensor) into this tensor. The source side is a host read; the target side is not a barrier. */
  async copy_(src: Tensor | HostArray): Promise<this> {
    const srcShape = src.shape;
    const n = srcShape.reduce((x, y) => x * y, 1);
    if (n !== this.numel) throw new KernbenchError('ERR_SHAPE_MISMATCH', `copy_: target has shape [${this.shape.join(', ')}], got a source of shape [${srcShape.join(', ')}]`);
    if (this.host.env.plan.noData) {
      // Timing-only mode: the source side is still a host-read barrier; no values move.
      if (src instanceof Tensor && src.desc) await src.host.drain();
      return this;
    }
    // A host tensor's own values are read in place (no copy: only read here); a device tensor's through numpy().
    const a = src instanceof Tensor ? await (src.hostValues && !src.desc ? { data: src.hostValues } : src.numpy()) : src;
    if (!this.desc) {
      this.hostValues?.set(a.data);
      return this;
    }
    const [, cols] = as2d(this.shape);
    const bpe = bytesPerElement(this.dtype);
    const arena = this.host.env.shared.arena;
    for (const s of this.desc.shards) {
      const n = s.rows[1] * s.cols[1];
      // A shard of whole rows is one run of the source: encoded from it in place. Others are
      // gathered into a block first (a copy of the shard per call: 64 MiB of garbage over the
      // ranks of a p = 1024 x 64 KiB all-reduce, had each shard taken this path).
      const wholeRows = s.cols[0] === 0 && s.cols[1] === cols;
      const block = wholeRows ? a.data.subarray(s.rows[0] * cols, s.rows[0] * cols + n) : new Float32Array(n);
      for (let r = 0; r < s.rows[1] && !wholeRows; r++) {
        const from = (s.rows[0] + r) * cols + s.cols[0];
        block.set(a.data.subarray(from, from + s.cols[1]), r * s.cols[1]);
      }
      encode(this.dtype, block, arena.subarray(s.arenaOffset, s.arenaOffset + n * bpe));
    }
    if (raceLog.on) this.raceAccess(true);
    return this;
  }

  toString(): string {
    this.syncBarrier('toString');
    const a = this.readNow();
    const shown = Array.from(a.data.subarray(0, 8), (v) => String(v)).join(', ');
    return `tensor([${shown}${a.data.length > 8 ? ', ...' : ''}], shape=[${this.shape.join(', ')}], dtype=${this.dtype}${this.desc ? `, device=ahbm:${this.desc.shards[0]?.sip}` : ''})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }

  /** Descriptor for kernel arguments. */
  toDesc(): TensorDesc {
    if (!this.desc) throw new KernbenchError('ERR_NEEDS_DEVICE_TENSOR', `a host tensor cannot be a kernel argument; copy_ it into a device tensor first, got host tensor of shape [${this.shape.join(', ')}]`);
    return this.desc;
  }

  private syncBarrier(member: string): void {
    if (this.host.hasPendingLaunches()) {
      throw new KernbenchError('ERR_HOST_READ_PENDING', `Tensor.${member}() reads device memory synchronously but kernels are still pending; await tensor.numpy() or torch.synchronize() first, got ${this.host.pending.size} pending launch(es)`);
    }
  }

  /** The race check's record of a host read or write of every shard (lib/race/log.ts). */
  private raceAccess(write: boolean): void {
    const bpe = bytesPerElement(this.dtype);
    for (const s of this.desc?.shards ?? []) raceLog.access(this.host.raceActor, write, this.name, s, bpe, 0, s.nbytes / bpe, this.host.clockPs);
  }

  private readNow(): HostArray {
    if (!this.desc) return { shape: [...this.shape], dtype: this.dtype, data: this.hostValues ? Float32Array.from(this.hostValues) : new Float32Array(this.numel) };
    // Timing-only mode: device memory is not backed (lib/shm/allocator.ts), so it reads as zeros.
    if (this.host.env.plan.noData) return { shape: [...this.shape], dtype: this.dtype, data: new Float32Array(this.numel) };
    if (raceLog.on) this.raceAccess(false);
    const [, cols] = as2d(this.shape);
    const out = new Float32Array(this.numel);
    const seen = new Set<string>();
    const arena = this.host.env.shared.arena;
    for (const s of this.desc.shards) {
      const key = `${s.rows[0]}:${s.cols[0]}`;
      if (seen.has(key)) continue; // a replica of a block already read
      seen.add(key);
      const bytes = arena.subarray(s.arenaOffset, s.arenaOffset + s.nbytes);
      // A shard of whole rows is one run of the result: decoded into it in place, with no block between.
      if (s.cols[0] === 0 && s.cols[1] === cols) {
        decode(this.dtype, bytes, out.subarray(s.rows[0] * cols, (s.rows[0] + s.rows[1]) * cols));
        continue;
      }
      const block = decode(this.dtype, bytes);
      for (let r = 0; r < s.rows[1]; r++) out.set(block.subarray(r * s.cols[1], (r + 1) * s.cols[1]), (s.rows[0] + r) * cols + s.cols[0]);
    }
    return { shape: [...this.shape], dtype: this.dtype, data: out };
  }
}

function checkDType(d: unknown): DType {
  if (!isDType(d)) throw new KernbenchError('ERR_INVALID_DTYPE', `dtype must be one of f32|f16|bf16|i32, got ${JSON.stringify(d)}`);
  return d;
}

function checkShape(shape: readonly number[]): number[] {
  if (!Array.isArray(shape) || shape.length < 1 || shape.length > 2 || !shape.every((d) => Number.isInteger(d) && d > 0)) {
    throw new KernbenchError('ERR_INVALID_SHAPE', `shape must be 1-D or 2-D with positive integer sizes, got ${JSON.stringify(shape)}`);
  }
  return [...shape];
}

/** 1-D [n] is a row [1, n]. */
function as2d(shape: readonly number[]): [number, number] {
  return shape.length === 1 ? [1, shape[0]] : [shape[0], shape[1]];
}

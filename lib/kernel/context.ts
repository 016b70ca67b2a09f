// Runs on: executor threads. Owns: `tl`, the Triton-shaped kernel language a
// kernel sees on one PE: identity, loads and stores, elementwise math, and IPCQ
// send/recv. Every op advances this PE's virtual clock by its modelled cost;
// local ops need no synchronisation (DESIGN §4).
import { bytesPerElement, decode, encode, roundArray, type DType } from '../dtype/index.js';
import { KernbenchError, formatPs } from '../errors.js';
import { type ChannelOp, type Received } from '../ipcq/channel.js';
import { recvSource, sendPeer, type World } from '../ccl/world.js';
import { DIRECTIONS, WAIT_KIND, type Direction } from '../shm/layout.js';
import type { PeCoord } from '../topology/machine.js';
import type { PeRuntime } from '../runtime/pe-runtime.js';
import type { ShardDesc, TensorDesc } from '../runtime/tensor-desc.js';
import { allocF32 } from './slab.js';
import { Tile, shapeSize, toShape } from './tile.js';

/** A pending send: await it (or `tl.wait`) to continue once the last byte has left. */
export class SendHandle implements PromiseLike<void> {
  constructor(
    private readonly tl: KernelContext,
    readonly op: ChannelOp<number>,
  ) {}
  then<R1 = void, R2 = never>(ok?: ((v: void) => R1 | PromiseLike<R1>) | null, fail?: ((e: unknown) => R2 | PromiseLike<R2>) | null): PromiseLike<R1 | R2> {
    return this.tl.waitSend(this).then(ok, fail);
  }
}

/** A pending receive (tl.recvAsync): `await tl.wait(f)` gives the tile. */
export class RecvFuture {
  constructor(
    readonly op: ChannelOp<Received>,
    readonly dtype: DType,
    readonly shape: number[],
  ) {}
}

export class KernelContext {
  /** Every channel op this kernel issued, drained before the kernel counts as finished. */
  readonly issued: ChannelOp<number | Received>[] = [];

  constructor(
    private readonly pe: PeRuntime,
    /** Kernel name (for errors and traces). */
    readonly name: string,
    private readonly world: World,
    /** This PE's CCL rank in `world` (programId for plain launches). */
    readonly rank: number,
  ) {}

  // ---- identity -----------------------------------------------------------

  /** Structural coordinates of this PE. */
  get coord(): PeCoord {
    return this.pe.coord;
  }
  /** Global PE id. */
  get peId(): number {
    return this.pe.id;
  }
  /** Program id along axis 0: this PE's index among the PEs of the launch (its CCL rank in a collective). */
  programId(axis = 0): number {
    if (axis !== 0) throw new KernbenchError('ERR_INVALID_ARG', `programId takes axis 0 (launches are 1-D), got ${axis}`);
    return this.rank;
  }
  numPrograms(): number {
    return this.world.pes.length;
  }
  get worldSize(): number {
    return this.world.pes.length;
  }
  /** This PE's virtual clock in ps. */
  get nowPs(): number {
    return this.pe.clockPs;
  }

  // ---- memory ---------------------------------------------------------------

  /** This PE's shard of `t`. */
  shard(t: TensorDesc): ShardDesc {
    const c = this.pe.coord;
    const s = t.shards.find((x) => x.sip === c.sip && x.cube === c.cube && x.pe === c.pe);
    if (!s) throw this.error('ERR_INVALID_ARG', `tensor '${t.name}' has no shard on this PE; its shards are on ${t.shards.map((x) => `(${x.sip},${x.cube},${x.pe})`).join(' ')}`);
    return s;
  }

  /** Elements in this PE's shard of `t`. */
  shardSize(t: TensorDesc): number {
    return this.shard(t).nbytes / bytesPerElement(t.dtype);
  }

  /** Load elements [offset, offset + count) of this PE's shard of `t` (default: all of it). */
  async load(t: TensorDesc, opts: { offset?: number; count?: number } = {}): Promise<Tile> {
    const s = this.shard(t);
    const bpe = bytesPerElement(t.dtype);
    const offset = opts.offset ?? 0;
    const count = opts.count ?? s.nbytes / bpe - offset;
    this.checkBounds('load', t, s, offset, count);
    const at = s.arenaOffset + offset * bpe;
    const data = decode(t.dtype, this.pe.env.shared.arena.subarray(at, at + count * bpe), allocF32(count));
    this.advance(this.pe.env.costs.memoryPs(s.space, count * bpe));
    if (this.pe.env.sched.jitter) await this.pe.env.sched.jitter.point();
    return new Tile(t.dtype, [count], data);
  }

  /** Store `tile` into this PE's shard of `t` at element `offset`. */
  async store(t: TensorDesc, tile: Tile, opts: { offset?: number } = {}): Promise<void> {
    const s = this.shard(t);
    const bpe = bytesPerElement(t.dtype);
    const offset = opts.offset ?? 0;
    this.checkBounds('store', t, s, offset, tile.size);
    const at = s.arenaOffset + offset * bpe;
    encode(t.dtype, tile.data, this.pe.env.shared.arena.subarray(at, at + tile.size * bpe));
    this.advance(this.pe.env.costs.memoryPs(s.space, tile.size * bpe));
    if (this.pe.env.sched.jitter) await this.pe.env.sched.jitter.point();
  }

  private checkBounds(op: string, t: TensorDesc, s: ShardDesc, offset: number, count: number): void {
    const n = s.nbytes / bytesPerElement(t.dtype);
    if (!Number.isInteger(offset) || !Number.isInteger(count) || offset < 0 || count < 0 || offset + count > n) {
      throw this.error('ERR_OUT_OF_BOUNDS', `${op} of elements [${offset}, ${offset + count}) is outside the shard of '${t.name}' (${n} elements, device bytes ${s.deviceOffset}..${s.deviceOffset + s.nbytes} of ${s.space}), got offset ${offset} count ${count}`);
    }
  }

  // ---- math -----------------------------------------------------------------

  /** A tile of zeros. */
  zeros(shape: number | readonly number[], dtype: DType): Tile {
    const sh = toShape(shape);
    return new Tile(dtype, sh, allocF32(shapeSize(sh)));
  }

  /** Elementwise a + b, rounded to a's dtype. */
  add(a: Tile, b: Tile): Tile {
    return this.binary('add', a, b, (x, y, o) => {
      for (let i = 0; i < o.length; i++) o[i] = x[i] + y[i];
    });
  }

  /** Elementwise a * s for a scalar s, rounded to a's dtype. */
  scale(a: Tile, s: number): Tile {
    const out = allocF32(a.size);
    for (let i = 0; i < out.length; i++) out[i] = a.data[i] * s;
    roundArray(a.dtype, out);
    this.advance(this.pe.env.costs.vectorPs(a.size));
    return new Tile(a.dtype, a.shape, out);
  }

  /** Elementwise reduction by a named op (sum, prod, min, max); avg is sum followed by a scale. */
  reduce(op: 'sum' | 'prod' | 'min' | 'max', a: Tile, b: Tile): Tile {
    switch (op) {
      case 'sum':
        return this.add(a, b);
      case 'prod':
        return this.binary('mul', a, b, (x, y, o) => {
          for (let i = 0; i < o.length; i++) o[i] = x[i] * y[i];
        });
      case 'min':
        return this.binary('minimum', a, b, (x, y, o) => {
          for (let i = 0; i < o.length; i++) o[i] = Math.min(x[i], y[i]);
        });
      case 'max':
        return this.binary('maximum', a, b, (x, y, o) => {
          for (let i = 0; i < o.length; i++) o[i] = Math.max(x[i], y[i]);
        });
      default: {
        const never: never = op;
        throw this.error('ERR_INVALID_ARG', `unknown reduction, got '${String(never)}'`);
      }
    }
  }

  protected binary(name: string, a: Tile, b: Tile, f: (x: Float32Array, y: Float32Array, o: Float32Array) => void): Tile {
    if (a.size !== b.size) throw this.error('ERR_INVALID_ARG', `${name}: operand sizes differ, got ${a.size} and ${b.size}`);
    const out = allocF32(a.size);
    f(a.data, b.data, out);
    roundArray(a.dtype, out);
    this.advance(this.pe.env.costs.vectorPs(a.size));
    return new Tile(a.dtype, a.shape, out);
  }

  // ---- IPCQ -----------------------------------------------------------------

  /** Send `tile` to the neighbour in `dir`. Runs in the background; await the handle to wait for it. */
  send(dir: Direction, tile: Tile): SendHandle {
    const d = this.dir(dir);
    const peer = sendPeer(this.world, this.rank, d);
    const op = this.pe.out[d].send(peer, tile.dtype, tile.data, this.pe.clockPs);
    if (!op.settled) this.issued.push(op);
    return new SendHandle(this, op);
  }

  /** Receive a tile of `shape` from the neighbour in `dir`. */
  async recv(dir: Direction, shape: number | readonly number[], dtype: DType): Promise<Tile> {
    return this.wait(this.recvAsync(dir, shape, dtype));
  }

  /** Start a receive; `await tl.wait(future)` gives the tile. */
  recvAsync(dir: Direction, shape: number | readonly number[], dtype: DType): RecvFuture {
    const d = this.dir(dir);
    const src = recvSource(this.world, this.rank, d);
    const sh = toShape(shape);
    const op = this.pe.in[d].recv(src.pe, src.dir, dtype, shapeSize(sh), this.pe.clockPs);
    if (!op.settled) this.issued.push(op);
    return new RecvFuture(op, dtype, sh);
  }

  /** Wait for a receive started with recvAsync. */
  async wait(f: RecvFuture): Promise<Tile> {
    const r = await this.settle(f.op);
    return new Tile(f.dtype, f.shape, r.values);
  }

  /** Wait for a send (what awaiting a SendHandle does). */
  async waitSend(h: SendHandle): Promise<void> {
    await this.settle(h.op);
  }

  /** Wait for every transfer this kernel started (the runtime does this when the kernel returns). */
  async drain(): Promise<void> {
    for (const op of this.issued) await this.settle(op);
  }

  private async settle<T extends number | Received>(op: ChannelOp<T>): Promise<T> {
    if (!op.settled) {
      if (op.index < 0) throw new Error('internal: an unsettled channel op without a queue index');
      const sched = this.pe.env.sched;
      const L = this.pe.env.shared.layout;
      const actor = L.peActor(this.pe.id);
      sched.block(actor, this.pe.chanDoneWord(op.channel), op.index + 1, WAIT_KIND.CHANNEL, op.channel, this.pe.clockPs);
      try {
        await op.promise;
      } finally {
        sched.unblock(actor);
      }
    }
    if (op.error !== undefined) throw op.error;
    const v = op.value as T;
    const done = typeof v === 'number' ? v : (v as Received).donePs;
    if (done > this.pe.clockPs) this.pe.clockPs = done;
    return v;
  }

  // ---- helpers ----------------------------------------------------------------

  private dir(d: Direction): number {
    const i = DIRECTIONS.indexOf(d);
    if (i < 0) throw this.error('ERR_INVALID_ARG', `direction must be one of ${DIRECTIONS.join('|')}, got '${String(d)}'`);
    return i;
  }

  /** Advance this PE's clock by a local op's cost. */
  advance(ps: number): void {
    this.pe.clockPs += ps;
  }

  error(code: 'ERR_INVALID_ARG' | 'ERR_OUT_OF_BOUNDS' | 'ERR_OUT_OF_MEMORY', message: string): KernbenchError {
    return new KernbenchError(code, `${this.name} on ${this.pe.env.machine.describePe(this.pe.id)} at ${formatPs(this.pe.clockPs)}: ${message}`, {
      pe: this.pe.coord,
      kernel: this.name,
      atPs: this.pe.clockPs,
    });
  }
}

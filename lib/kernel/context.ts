// Runs on: executor threads. Owns: `tl`, the Triton-shaped kernel language a
// kernel sees on one PE: identity, loads and stores, elementwise math, and IPCQ
// send/recv. Every op advances this PE's virtual clock by its modelled cost;
// local ops need no synchronisation (DESIGN §4).
import { bytesPerElement, decode, encode, roundArray, type DType } from '../dtype/index.js';
import { KernbenchError, formatPs } from '../errors.js';
import { pieceCount, type ChannelOp, type InboundChannel, type OutboundChannel } from '../ipcq/channel.js';
import { raceLog } from '../race/log.js';
import { Arbiter } from '../coordinator/arbiter.js';
import { portOf, type Ports } from './ports.js';
import { Flow, Region } from './flow.js';
import { ACTOR_STATE, DIRECTIONS, GRANT, HEADER, MAX_BRANCHES, PE, WAIT_KIND, type Direction } from '../shm/layout.js';
import type { PeCoord } from '../topology/machine.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import type { VirtualClock } from '../time/virtual-clock.js';
import type { ShardDesc, TensorDesc } from '../shm/tensor-desc.js';
import { allocF32, allocTile, blankTile } from '../tile/slab.js';
import { allocate } from '../shm/allocator.js';

import { addTiles, cdiv, dot, elementwise, softmax, type Operand } from './math.js';
import { Tile, shapeSize, toShape } from '../tile/tile.js';

/**
 * A send: await it (or `tl.wait`) to continue once the last byte has left.
 * `op` is null when the send completed as it was issued (the fast path).
 */
export class SendHandle implements PromiseLike<void> {
  constructor(
    private readonly tl: KernelContext,
    readonly op: ChannelOp<number> | null,
    /** Completion time when `op` is null. */
    readonly donePs: number,
    /** When `op` is null and links are shared: the last byte's arrival (the join floor of what the kernel does after waiting for it). */
    readonly arrivalPs = 0,
  ) {}
  then<R1 = void, R2 = never>(ok?: ((v: void) => R1 | PromiseLike<R1>) | null, fail?: ((e: unknown) => R2 | PromiseLike<R2>) | null): PromiseLike<R1 | R2> {
    if (this.op === null && ok) {
      // Already sent: `await` resumes without another promise.
      this.tl.waitSendNow(this);
      this.tl.settledNow('await send');
      return Promise.resolve(ok());
    }
    return this.tl.waitSend(this).then(ok, fail);
  }
}

/** A pending receive (tl.recvAsync): `await tl.wait(f)` gives the tile. */
export class RecvFuture {
  constructor(
    /** Null when the receive completed as it was issued (the fast path). */
    readonly op: ChannelOp<number> | null,
    /** Completion time when `op` is null. */
    readonly donePs: number,
    /** Where the values land: the receive's `out` tile or a new one. Read it through `tl.wait`. */
    readonly tile: Tile,
  ) {}
  /** The pieces to acquire when it completes (--check-races only; lib/race/log.ts). */
  raceKeys: string[] | null = null;
}

/** Scratch tensors (--check-races only): the race check leaves them out, since a PE's next kernel reuses their TCM. */
const scratchDescs = new WeakSet<TensorDesc>();

/** What a kernel needs of the PE it runs on (lib/pe/pe-runtime.ts provides it). */
export interface KernelPe {
  readonly id: number;
  readonly coord: PeCoord;
  readonly env: ThreadEnv;
  readonly clock: VirtualClock;
  /** DMA channels per direction. */
  readonly out: OutboundChannel[];
  readonly in: InboundChannel[];
  /** The ctl word counting the settled ops of one of this PE's channels. */
  chanDoneWord(channel: number): number;
}

export class KernelContext {
  /** This context's flow of control: the kernel's main flow, or one branch of a tl.parallel. */
  private readonly flow: Flow;
  /** timing.link_sharing: max_min (lib/coordinator/link-arbiter.ts). */
  private readonly sharedLinks: boolean;
  /**
   * With shared links: the latest arrival of the sends this flow has waited for. Its
   * later pieces enter their links no earlier: it learnt the send was done when the
   * last byte left, before the link model had run to its arrival (docs/determinism.md).
   */
  private linkHorizonPs = 0;
  /** With shared links: the latest arrival of every send this flow made; its end (drain) waits for it. */
  private sendsArrivePs = 0;
  constructor(
    private readonly pe: KernelPe,
    /** Kernel name (for errors and traces). */
    readonly name: string,
    /** Where each direction's sends go and receives come from (lib/kernel/ports.ts). */
    private readonly ports: Ports,
    /** This PE's CCL rank in `world` (programId for plain launches). */
    readonly rank: number,
    flow?: Flow,
  ) {
    this.flow = flow ?? new Flow(pe.clock, pe.env.shared.layout.peActor(pe.id), null, -1);
    this.sharedLinks = pe.env.plan.links !== 'none';
  }

  /** This flow's clock (the PE's, or a tl.parallel branch's own). */
  private get clock(): VirtualClock {
    return this.flow.clock;
  }

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
    return this.ports.size;
  }
  get worldSize(): number {
    return this.ports.size;
  }
  /** This flow's virtual clock in ps. */
  get nowPs(): number {
    this.enter('nowPs');
    return this.clock.nowPs;
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

  /**
   * Load elements [offset, offset + count) of this PE's shard of `t` as a 1-D
   * tile; with no offset and count, the whole shard in its shape ([cols] for a
   * 1-D tensor, [rows, cols] for a 2-D one).
   *
   * `inPlace`: the tile may be the shard's own bytes rather than a copy of them
   * (it is, for an f32 tensor with data): writes to the tile change the shard at
   * once, and a store of the tile to where it came from copies nothing. For a
   * kernel that loads its shard once, works on it and stores it back whole (the
   * ring all-reduce): the shard's bytes between the load and that store are then
   * unspecified, which nobody can observe but the kernel itself (host reads wait
   * for the kernel; another kernel touching them is a data race). Costs and times
   * are those of a load. It saves the copy's memory: a ring all-reduce at
   * p = 1024 x 64 KiB held 64 MiB of loaded shards (decision 0034).
   */
  load(t: TensorDesc, opts: { offset?: number; count?: number; inPlace?: boolean } = {}): Promise<Tile> {
    this.enter('load');
    const s = this.shard(t);
    const bpe = bytesPerElement(t.dtype);
    const whole = opts.offset === undefined && opts.count === undefined;
    const offset = opts.offset ?? 0;
    const count = opts.count ?? s.nbytes / bpe - offset;
    this.checkBounds('load', t, s, offset, count);
    const at = s.arenaOffset + offset * bpe;
    const shape = whole ? (t.shape.length === 1 ? [s.cols[1]] : [s.rows[1], s.cols[1]]) : [count];
    const noData = this.pe.env.plan.noData;
    // Tiles hold f32 values, so only an f32 shard's bytes can be the tile (arena offsets are 64-byte aligned).
    const viewed = opts.inPlace === true && t.dtype === 'f32' && !noData;
    const tile = viewed ? new Tile('f32', shape, new Float32Array(this.pe.env.shared.arena.buffer, at, count)) : this.newTile(t.dtype, shape, count);
    if (!noData && !viewed) decode(t.dtype, this.pe.env.shared.arena.subarray(at, at + count * bpe), tile.data);
    if (raceLog.on) this.raceAccess(false, t, s, offset, count);
    return this.memoryAccess('load', s, count * bpe, tile);
  }

  /**
   * PE-local scratch: a tensor of `shape` in this PE's TCM, for the kernel's
   * lifetime (released when the kernel returns). Refuses to overflow the TCM.
   */
  scratch(shape: number | readonly number[], dtype: DType, name = 'scratch'): TensorDesc {
    this.enter('scratch');
    if (this.flow.region) throw this.error('ERR_KERNEL_CONCURRENCY', `scratch '${name}' inside a tl.parallel branch: branches would take TCM in wall-clock order; allocate it before tl.parallel and hand it to the branch, got a scratch() in branch ${this.flow.branch}`);
    const sh = toShape(shape);
    const n = shapeSize(sh);
    const nbytes = n * bytesPerElement(dtype);
    const c = this.pe.coord;
    let a;
    try {
      a = allocate(this.pe.env.shared, this.pe.env.machine, { ...c, space: 'tcm' }, nbytes);
    } catch (e) {
      if (e instanceof KernbenchError) throw this.error('ERR_OUT_OF_MEMORY', `scratch '${name}': ${e.message}`);
      throw e;
    }
    this.scratchBytes += Math.max(64, Math.ceil(nbytes / 64) * 64);
    const rows = sh.length === 2 ? sh[0] : 1;
    const cols = sh.length === 2 ? sh[1] : sh[0];
    const desc: TensorDesc = { kind: 'tensor', name, dtype, shape: sh, shards: [{ ...c, space: 'tcm', arenaOffset: a.arenaOffset, deviceOffset: a.deviceOffset, nbytes, rows: [0, rows], cols: [0, cols] }] };
    if (raceLog.on) scratchDescs.add(desc);
    return desc;
  }

  /** The race check's record of a load or store (not of scratch: lib/race/log.ts). */
  private raceAccess(write: boolean, t: TensorDesc, s: ShardDesc, offset: number, count: number): void {
    if (scratchDescs.has(t)) return;
    raceLog.access(raceLog.kernelOn(this.pe.id), write, t.name, s, bytesPerElement(t.dtype), offset, count, this.clock.nowPs);
  }

  /** Bytes of TCM scratch this kernel holds (released by the runtime at kernel end). */
  scratchBytes = 0;

  /** Store `tile` into this PE's shard of `t` at element `offset`. */
  store(t: TensorDesc, tile: Tile, opts: { offset?: number } = {}): Promise<void> {
    this.enter('store');
    const s = this.shard(t);
    const bpe = bytesPerElement(t.dtype);
    const offset = opts.offset ?? 0;
    this.checkBounds('store', t, s, offset, tile.size);
    const at = s.arenaOffset + offset * bpe;
    const arena = this.pe.env.shared.arena;
    // A tile loaded in place and stored back where it came from is already there.
    const home = tile.data.buffer === arena.buffer && tile.data.byteOffset === at && t.dtype === 'f32';
    if (!this.pe.env.plan.noData && !home) encode(t.dtype, tile.data, arena.subarray(at, at + tile.size * bpe));
    if (raceLog.on) this.raceAccess(true, t, s, offset, tile.size);
    return this.memoryAccess('store', s, tile.size * bpe, undefined);
  }

  /**
   * Charge an access of `bytes` to the shard's memory. TCM is the PE's own; a
   * cube's SRAM and HBM channels are shared by its PEs, so an access there is a
   * request to the arbiter (lib/coordinator/arbiter.ts), which serves requests
   * in virtual-time order and answers with the completion time. The requester
   * runs a pass itself first: when no other actor can still ask earlier (a PE
   * alone on its channel, say), it is granted at once, without a thread hop.
   */
  private memoryAccess<T>(op: string, s: ShardDesc, bytes: number, value: T): Promise<T> {
    const env = this.pe.env;
    const flow = this.flow;
    if (s.space === 'tcm' || !env.costs.contended(s.space)) {
      this.advance(env.costs.memoryPs(s.space, bytes), `${s.space} access`);
      flow.begin(op);
      if (env.sched.jitter) return env.sched.jitter.point().then(() => this.settledAs(value), (e: unknown) => this.failedWith(e));
      flow.end();
      return Promise.resolve(value);
    }
    if (flow.region) {
      throw this.error('ERR_KERNEL_CONCURRENCY', `${op} of ${s.space} inside a tl.parallel branch: the PE has one request slot at the cube's memory arbiter, which two branches would fill in wall-clock order; load before tl.parallel or store after it, got a ${s.space} ${op} in branch ${flow.branch}`);
    }
    const requestedPs = this.clock.nowPs;
    const L = env.shared.layout;
    const times = env.shared.times;
    const ctl = env.shared.ctl;
    const pe = this.pe.id;
    const cube = s.sip * env.machine.cubesPerSip + s.cube;
    times[L.grant(pe, GRANT.AT_PS)] = requestedPs;
    times[L.grant(pe, GRANT.BYTES)] = bytes;
    times[L.grant(pe, GRANT.SPACE)] = s.space === 'hbm' ? 1 : 0;
    times[L.grant(pe, GRANT.CUBE)] = cube;
    Atomics.add(ctl, HEADER.GRANTS_PENDING, 1);
    const n = Atomics.add(ctl, L.pe(pe, PE.REQ_SEQ), 1) + 1;
    flow.begin(op);
    const granted = (): T => {
      this.clock.advanceTo(times[L.grant(pe, GRANT.DONE_PS)]);
      env.trace?.span(pe, `${s.space} access`, requestedPs, this.clock.nowPs);
      return this.settledAs(value);
    };
    if (!env.sched.jitter && this.selfGrant(flow.actor, n)) return Promise.resolve(granted());
    // Not granted yet: waiting publishes this actor as BLOCKED, which rings the coordinator (requests are pending).
    return env.sched.waitUntil(flow.actor, L.pe(pe, PE.GRANT_SEQ), n, WAIT_KIND.GRANT, cube, requestedPs).then(granted, (e: unknown) => this.failedWith(e));
  }

  /** Run an arbiter pass for this PE's request `n`, if the lock is free; true when it is granted. Wakes whoever else the pass granted. */
  private selfGrant(actor: number, n: number): boolean {
    const env = this.pe.env;
    const arbiter = Arbiter.of(env.shared, env.machine);
    if (!arbiter.tryLock()) return false;
    let granted: number[];
    try {
      granted = arbiter.pass(actor, this.pe.id);
    } finally {
      arbiter.unlock();
    }
    const L = env.shared.layout;
    for (const other of granted) if (other !== this.pe.id) env.sched.publish(L.pe(other, PE.GRANT_SEQ), env.plan.peExecutor[other]);
    return Atomics.load(env.shared.ctl, L.pe(this.pe.id, PE.GRANT_SEQ)) >= n;
  }

  /** The operation in flight settled with `value`. */
  private settledAs<T>(value: T): T {
    this.flow.end();
    return value;
  }

  /** The operation in flight failed. */
  private failedWith(e: unknown): never {
    this.flow.end();
    throw e;
  }

  private checkBounds(op: string, t: TensorDesc, s: ShardDesc, offset: number, count: number): void {
    const n = s.nbytes / bytesPerElement(t.dtype);
    if (!Number.isInteger(offset) || !Number.isInteger(count) || offset < 0 || count < 0 || offset + count > n) {
      throw this.error('ERR_OUT_OF_BOUNDS', `${op} of elements [${offset}, ${offset + count}) is outside the shard of '${t.name}' (${n} elements, device bytes ${s.deviceOffset}..${s.deviceOffset + s.nbytes} of ${s.space}), got offset ${offset} count ${count}`);
    }
  }

  // ---- math -----------------------------------------------------------------

  /** A tile of zeros (in timing-only mode, a tile whose values are unspecified). */
  zeros(shape: number | readonly number[], dtype: DType): Tile {
    const sh = toShape(shape);
    return this.newTile(dtype, sh, shapeSize(sh));
  }

  /** A fresh zeroed tile, or in timing-only mode one without storage of its own (lib/tile/slab.ts, blankTile). */
  private newTile(dtype: DType, shape: readonly number[], n: number): Tile {
    return this.pe.env.plan.noData ? blankTile(dtype, shape, n) : allocTile(dtype, shape, n);
  }

  /**
   * Elementwise a + b (tiles or scalars), rounded to the lead tile's dtype. With
   * `out` (same size and dtype as the result; it may be `a` or `b`), the result
   * is written there and `out` returned, instead of a new tile.
   */
  add(a: Operand, b: Operand, out?: Tile): Tile {
    if (a instanceof Tile && b instanceof Tile && a.size === b.size && !this.pe.env.plan.noData) {
      // The collectives' hot path: one monomorphic loop, no closure per element.
      if (out) this.checkOut('add', out, a.dtype, a.size);
      const o = out ?? allocTile(a.dtype, a.shape, a.size);
      addTiles(a, b, o);
      roundArray(a.dtype, o.data);
      return this.vector(o);
    }
    if (out && this.pe.env.plan.noData && a instanceof Tile) {
      // Timing-only, into `out` (a ring step's reduction): nothing to compute or allocate.
      this.checkOut('add', out, a.dtype, a.size);
      return this.vector(out);
    }
    return this.into('add', this.vector(this.ew('add', [a, b], (x, y) => x + y)), out);
  }

  /** Copy a computed result into `out` when one was given. */
  private into(op: string, r: Tile, out: Tile | undefined): Tile {
    if (!out) return r;
    this.checkOut(op, out, r.dtype, r.size);
    // Timing-only: no values to copy (both may view the same blank buffer).
    if (!this.pe.env.plan.noData) out.data.set(r.data);
    return out;
  }
  sub(a: Operand, b: Operand): Tile {
    return this.vector(this.ew('sub', [a, b], (x, y) => x - y));
  }
  mul(a: Operand, b: Operand): Tile {
    return this.vector(this.ew('mul', [a, b], (x, y) => x * y));
  }
  div(a: Operand, b: Operand): Tile {
    return this.vector(this.ew('div', [a, b], (x, y) => x / y));
  }
  maximum(a: Operand, b: Operand): Tile {
    return this.vector(this.ew('maximum', [a, b], (x, y) => Math.max(x, y)));
  }
  minimum(a: Operand, b: Operand): Tile {
    return this.vector(this.ew('minimum', [a, b], (x, y) => Math.min(x, y)));
  }
  /** a * b + c with one rounding (fused). */
  fma(a: Operand, b: Operand, c: Operand): Tile {
    return this.vector(this.ew('fma', [a, b, c], (x, y, z) => x * y + z));
  }
  clamp(x: Tile, lo: Operand, hi: Operand): Tile {
    return this.vector(this.ew('clamp', [x, lo, hi], (v, l, h) => Math.min(Math.max(v, l), h)));
  }
  /** a * s for a scalar s. */
  scale(a: Tile, s: number): Tile {
    return this.mul(a, s);
  }
  /** Softmax along the last axis; costs a few vector passes (max, exp-sum, divide). */
  softmax(x: Tile): Tile {
    const out = this.pe.env.plan.noData ? blankTile(x.dtype, x.shape, x.size) : softmax(x);
    this.advance(3 * this.pe.env.costs.vectorPs(x.size), 'softmax');
    return out;
  }
  /** Matrix product [M, K] @ [K, N] on the matrix unit, accumulated in f32 (Triton's tl.dot). */
  dot(a: Tile, b: Tile): Tile {
    const out = this.pe.env.plan.noData ? blankTile('f32', [a.shape[0], b.shape[1]], a.shape[0] * b.shape[1]) : dot(a, b);
    this.advance(this.pe.env.costs.gemmPs(a.shape[0], b.shape[1], a.shape[1], a.dtype === 'f32'), 'dot');
    return out;
  }
  /** Integer ceiling division. */
  cdiv(a: number, b: number): number {
    return cdiv(a, b);
  }
  /** The tile converted to another dtype (rounded once). */
  to(x: Tile, dtype: DType): Tile {
    if (this.pe.env.plan.noData) {
      this.advance(this.pe.env.costs.vectorPs(x.size), 'convert');
      return blankTile(dtype, x.shape, x.size);
    }
    const out = allocF32(x.size);
    out.set(x.data);
    roundArray(dtype, out);
    this.advance(this.pe.env.costs.vectorPs(x.size), 'convert');
    return new Tile(dtype, x.shape, out);
  }

  /** Elementwise reduction by a collective's op (sum, prod, min, max); `out` as for `add`. */
  reduce(op: 'sum' | 'prod' | 'min' | 'max', a: Tile, b: Tile, out?: Tile): Tile {
    switch (op) {
      case 'sum':
        return this.add(a, b, out);
      case 'prod':
        return this.into('prod', this.mul(a, b), out);
      case 'min':
        return this.into('min', this.minimum(a, b), out);
      case 'max':
        return this.into('max', this.maximum(a, b), out);
      default: {
        const never: never = op;
        throw this.error('ERR_INVALID_ARG', `unknown reduction, got '${String(never)}'`);
      }
    }
  }

  /** An elementwise op; in timing-only mode (--no-data) only its result's shape is made. */
  private ew(op: string, xs: Operand[], f: (...v: number[]) => number): Tile {
    if (this.pe.env.plan.noData) {
      const lead = xs.find((x): x is Tile => x instanceof Tile);
      if (lead) return blankTile(lead.dtype, lead.shape, lead.size);
    }
    return elementwise(op, xs, f);
  }

  /** Charge a vector-unit op on the result's elements. */
  private vector(out: Tile): Tile {
    this.advance(this.pe.env.costs.vectorPs(out.size), 'vector');
    return out;
  }

  // ---- IPCQ -----------------------------------------------------------------

  /** Send `tile` to the neighbour in `dir`. Runs in the background; await the handle to wait for it. */
  send(dir: Direction, tile: Tile): SendHandle {
    this.enter('send');
    const d = this.dir(dir);
    this.claim('send', d);
    const peer = portOf(this.ports.send, d).pe;
    // The race check: what this kernel did so far happens before the receiver takes these pieces.
    if (raceLog.on) raceLog.send(this.pe.id, this.pe.env.shared.layout.ringOf(this.pe.id, d, this.ports.set), pieceCount(this.pe.env.plan.ccl.vc_chunk_size, tile.dtype, tile.size));
    const r = this.pe.out[d].send(this.ports.set, peer, tile.dtype, tile.data, this.clock.nowPs, this.linkHorizonPs);
    // Either way the kernel's end waits for it (drain).
    if (typeof r === 'number') {
      if (r > this.flow.doneAtOncePs) this.flow.doneAtOncePs = r;
      if (!this.sharedLinks) return new SendHandle(this, null, r);
      // As drain and waitSend do for a queued send (below): the kernel ends after it arrived.
      const arrivalPs = r + this.pe.env.costs.flightPs(this.pe.id, peer);
      this.sendsArrivePs = Math.max(this.sendsArrivePs, arrivalPs);
      return new SendHandle(this, null, r, arrivalPs);
    }
    this.track(r);
    return new SendHandle(this, r, 0);
  }

  /**
   * Receive a tile of `shape` from the neighbour in `dir`. With `out` (a tile of
   * that size and dtype, e.g. a view of a chunk), the values land in it and it is
   * what the receive gives; otherwise a new tile. Same virtual time either way.
   */
  recv(dir: Direction, shape: number | readonly number[], dtype: DType, out?: Tile): Promise<Tile> {
    const tile = this.recvTile(shape, dtype, out);
    const r = this.recvIssue(dir, dtype, tile);
    // Done at once (the common case): what wait() does, without a RecvFuture.
    if (typeof r === 'number') {
      this.clock.advanceTo(r);
      this.settledNow('recv');
      if (raceLog.on) this.raceReceived(this.raceKeys);
      return Promise.resolve(tile);
    }
    const f = new RecvFuture(r, 0, tile);
    f.raceKeys = this.raceKeys;
    return this.wait(f);
  }

  /** Start a receive; `await tl.wait(future)` gives the tile. Leave `out` alone until then. */
  recvAsync(dir: Direction, shape: number | readonly number[], dtype: DType, out?: Tile): RecvFuture {
    const tile = this.recvTile(shape, dtype, out);
    const r = this.recvIssue(dir, dtype, tile);
    const f = typeof r === 'number' ? new RecvFuture(null, r, tile) : new RecvFuture(r, 0, tile);
    f.raceKeys = this.raceKeys;
    return f;
  }

  /** Where a receive lands: `out` (checked) or a new tile. */
  private recvTile(shape: number | readonly number[], dtype: DType, out: Tile | undefined): Tile {
    if (out) {
      this.checkOut('recv', out, dtype, typeof shape === 'number' ? shape : shapeSize(shape));
      return out;
    }
    const sh = toShape(shape);
    return this.newTile(dtype, sh, shapeSize(sh));
  }

  /** Issue a receive into `tile`: its completion time if done at once, else the queued op. */
  private recvIssue(dir: Direction, dtype: DType, tile: Tile): ChannelOp<number> | number {
    this.enter('recv');
    const d = this.dir(dir);
    this.claim('recv', d);
    const src = portOf(this.ports.recv, d);
    if (raceLog.on) this.raceKeys = raceLog.receive(this.pe.env.shared.layout.ringOf(src.pe, src.dir, this.ports.set), pieceCount(this.pe.env.plan.ccl.vc_chunk_size, dtype, tile.size));
    const r = this.pe.in[d].recv(src.pe, src.dir, this.ports.set, dtype, tile.data, this.clock.nowPs);
    // Either way the kernel's end waits for it (drain), even if never waited on.
    if (typeof r === 'number') {
      if (r > this.flow.doneAtOncePs) this.flow.doneAtOncePs = r;
    } else this.track(r);
    return r;
  }

  /** Wait for a receive started with recvAsync. */
  wait(f: RecvFuture): Promise<Tile> {
    // Done at once or settled already (the common case): no async frame, one resolved promise.
    if (f.op === null) {
      this.clock.advanceTo(f.donePs);
      this.settledNow('wait');
      if (raceLog.on) this.raceReceived(f.raceKeys);
      return Promise.resolve(f.tile);
    }
    if (f.op.settled) {
      this.take(f.op);
      this.settledNow('wait');
      if (raceLog.on) this.raceReceived(f.raceKeys);
      return Promise.resolve(f.tile);
    }
    // Not in yet: wait as settle() does, with one promise instead of an async frame (a
    // ring step under --threads 2 lands here whenever its thread got ahead of the other).
    this.flow.begin('wait');
    const op = f.op;
    const sched = this.pe.env.sched;
    const actor = this.flow.actor;
    sched.block(actor, this.pe.chanDoneWord(op.channel), op.index + 1, WAIT_KIND.CHANNEL, op.channel, this.clock.nowPs);
    return op.promise.then(
      () => {
        sched.unblock(actor);
        this.take(op);
        this.untrack(op);
        if (raceLog.on) this.raceReceived(f.raceKeys);
        return this.settledAs(f.tile);
      },
      (e: unknown) => {
        sched.unblock(actor);
        return this.failedWith(e);
      },
    );
  }

  /** The pieces of the receive last issued (--check-races only). */
  private raceKeys: string[] | null = null;

  /** The race check: a receive's values are in, so its sender's past happens before what this kernel does next. */
  private raceReceived(keys: string[] | null): void {
    if (keys) raceLog.acquire(raceLog.kernelOn(this.pe.id), keys);
  }

  /** An `out` tile must hold exactly the result: `count` elements of `dtype`. */
  private checkOut(op: string, out: Tile, dtype: DType, count: number): void {
    if (!(out instanceof Tile) || out.dtype !== dtype || out.size !== count) {
      const got = out instanceof Tile ? `a ${out.dtype} tile of ${out.size} elements` : typeof out;
      throw this.error('ERR_INVALID_ARG', `${op}: out must be a ${dtype} tile of ${count} elements, got ${got}`);
    }
  }

  /** @internal Account for a send that has already completed (SendHandle fast path). */
  waitSendNow(h: SendHandle): void {
    if (h.op === null) {
      this.clock.advanceTo(h.donePs);
      if (this.sharedLinks) this.linkHorizonPs = Math.max(this.linkHorizonPs, h.arrivalPs);
    } else {
      this.take(h.op);
      if (this.sharedLinks) this.linkHorizonPs = Math.max(this.linkHorizonPs, this.arrivalOf(h.op));
    }
  }

  /** A settled send's last arrival (its last byte left + the route's latency); -1 for a receive. */
  private arrivalOf(op: ChannelOp<number>): number {
    if (op.channel >= 4) return -1;
    return (op.value as number) + this.pe.env.costs.flightPs(this.pe.id, portOf(this.ports.send, op.channel).pe);
  }

  /** Wait for a send (what awaiting a SendHandle does). */
  waitSend(h: SendHandle): Promise<void> {
    if (h.op === null || h.op.settled) {
      this.waitSendNow(h);
      this.settledNow('await send');
      return Promise.resolve();
    }
    this.flow.begin('await send');
    const op = h.op;
    return this.settle(op).then(
      () => {
        if (this.sharedLinks) this.linkHorizonPs = Math.max(this.linkHorizonPs, this.arrivalOf(op));
        return this.settledAs(undefined);
      },
      (e: unknown) => this.failedWith(e),
    );
  }

  /** Ops in this flow's `issued` after its last compaction; the next one comes at twice as many (plus a few). */
  private compactedAt = 0;

  /**
   * Remember a queued op for drain. A long kernel queues one or two ops a step
   * (a ring all-reduce at p = 1024: ~2 000 per rank, each with its promises and
   * closures, all kept to the kernel's end: ~90 000 live ChannelOps on one
   * thread; docs/benchmarks.md, "Peak memory"). So every so often the list
   * drops the ops drain would pass over without effect: settled without error
   * at a time the flow's clock has reached already (drain would advance the
   * clock to it, a no-op, since clocks only go forward). Unsettled and failed
   * ops stay, in order, so drain waits and throws as it did.
   */
  private track(op: ChannelOp<number>): void {
    const issued = this.flow.issued;
    issued.push(op);
    if (issued.length < 2 * this.compactedAt + 16) return;
    const now = this.clock.nowPs;
    let kept = 0;
    for (const o of issued) {
      if (o.settled && o.error === undefined && (o.value as number) <= now) {
        if (this.sharedLinks) this.sendsArrivePs = Math.max(this.sendsArrivePs, this.arrivalOf(o));
        continue;
      }
      issued[kept++] = o;
    }
    issued.length = kept;
    this.compactedAt = kept;
  }

  /**
   * A receive just waited for and taken into the clock is all drain would do
   * with it (a settled op at a time the clock has reached): drop it now when it
   * is the op tracked last, as it usually is. Left for the next compaction, a
   * ring step's parked receive (--threads 2: one in fifteen) lived through
   * several young collections with its op, promise and resolvers, and was
   * promoted.
   */
  private untrack(op: ChannelOp<number>): void {
    const issued = this.flow.issued;
    if (op.channel >= 4 && issued.length > 0 && issued[issued.length - 1] === op) issued.pop();
  }

  /** Wait for every transfer this flow started (the runtime does this when the kernel returns; tl.parallel when a branch does). */
  async drain(): Promise<void> {
    // Most ops settled long ago: only the others cost an await.
    for (const op of this.flow.issued) {
      if (op.settled) this.take(op);
      else await this.settle(op);
      if (this.sharedLinks) this.sendsArrivePs = Math.max(this.sendsArrivePs, this.arrivalOf(op));
    }
    this.clock.advanceTo(this.flow.doneAtOncePs);
    // With shared links a flow ends when its sends have arrived: whatever its end wakes (a
    // host, a launch) acts after the link model has made them final (docs/determinism.md).
    if (this.sharedLinks) this.clock.advanceTo(Math.max(this.sendsArrivePs, this.linkHorizonPs));
  }

  /**
   * Run `branches` as concurrent flows of this kernel, each with its own `tl`
   * and its own virtual clock starting now; resolves with their results (in
   * branch order) once every branch and its transfers are done, and this flow
   * continues at the latest branch's end. Each IPCQ direction (send side and
   * receive side apart) belongs to the one branch that uses it. Branches may
   * not allocate scratch, touch shared cube memory, or nest tl.parallel.
   * See docs/determinism.md, "Concurrency inside a kernel".
   */
  async parallel<T>(branches: readonly ((tl: KernelContext) => Promise<T>)[]): Promise<T[]> {
    this.enter('parallel');
    if (this.flow.region) throw this.error('ERR_KERNEL_CONCURRENCY', `tl.parallel inside a tl.parallel branch: flatten the branches into one tl.parallel, got a nested call in branch ${this.flow.branch}`);
    if (!Array.isArray(branches) || branches.length < 1 || branches.length > MAX_BRANCHES || branches.some((b) => typeof b !== 'function')) {
      throw this.error('ERR_INVALID_ARG', `tl.parallel takes an array of 1 to ${MAX_BRANCHES} functions (tl) => Promise, got ${Array.isArray(branches) ? `${branches.length} item(s)` : typeof branches}`);
    }
    const { env } = this.pe;
    const L = env.shared.layout;
    const region = new Region();
    const start = this.clock.nowPs;
    const kids = branches.map((_, i) => new KernelContext(this.pe, this.name, this.ports, this.rank, Flow.branch(start, L.branchActor(this.pe.id, i), region, i)));
    // A branch's pieces, like this flow's, enter their links after the sends it waited for arrived.
    for (const k of kids) k.linkHorizonPs = this.linkHorizonPs;
    // The main flow waits for its branches, which are actors of their own meanwhile. The
    // hand-overs leave no instant in which none of them is active: the deadlock detector
    // and the arbiters' lower bounds (decision 0047) would otherwise see a PE whose flow of
    // control is about to run as one that cannot run.
    this.flow.begin('parallel');
    for (const k of kids) env.sched.setState(k.flow.actor, ACTOR_STATE.RUNNING);
    env.sched.setState(this.flow.actor, ACTOR_STATE.IDLE);
    let live = kids.length;
    let resumed = false;
    const resume = (): void => {
      if (resumed) return;
      resumed = true;
      env.sched.setState(this.flow.actor, ACTOR_STATE.RUNNING);
    };
    try {
      const values = await Promise.all(
        kids.map(async (k, i) => {
          try {
            const v = await branches[i](k);
            await k.drain();
            return v;
          } finally {
            // The last branch to end makes the main flow RUNNING before it goes idle itself.
            if (--live === 0) resume();
            env.sched.setState(k.flow.actor, ACTOR_STATE.IDLE);
          }
        }),
      );
      for (const k of kids) this.clock.advanceTo(k.clock.nowPs);
      return values;
    } finally {
      // Also when a branch failed and the others still run.
      resume();
      this.flow.end();
    }
  }

  private async settle(op: ChannelOp<number>): Promise<number> {
    if (!op.settled) {
      if (op.index < 0) throw new Error('internal: an unsettled channel op without a queue index');
      const sched = this.pe.env.sched;
      const actor = this.flow.actor;
      sched.block(actor, this.pe.chanDoneWord(op.channel), op.index + 1, WAIT_KIND.CHANNEL, op.channel, this.clock.nowPs);
      try {
        await op.promise;
      } finally {
        sched.unblock(actor);
      }
    }
    return this.take(op);
  }

  /** A settled op's completion time; the PE's clock moves to it. */
  private take(op: ChannelOp<number>): number {
    if (op.error !== undefined) throw op.error;
    const done = op.value as number;
    this.clock.advanceTo(done);
    return done;
  }

  // ---- helpers ----------------------------------------------------------------

  private dir(d: Direction): number {
    const i = DIRECTIONS.indexOf(d);
    if (i < 0) throw this.error('ERR_INVALID_ARG', `direction must be one of ${DIRECTIONS.join('|')}, got '${String(d)}'`);
    return i;
  }

  /** Refuse `op` while another tl operation of this flow is in flight (lib/kernel/flow.ts). */
  private enter(op: string): void {
    const busy = this.flow.busy();
    if (busy !== null) {
      throw this.error(
        'ERR_KERNEL_CONCURRENCY',
        `${op} while ${busy} is in flight in the same flow: two flows of control share this tl (e.g. Promise.all of two async functions), or a tl promise was not awaited before the next operation; their order would follow wall-clock time into virtual time. Await each tl operation before the next, overlap transfers with send handles and recvAsync/wait, and run concurrent flows as tl.parallel([...]) (docs/determinism.md), got '${op}' during '${busy}'`,
      );
    }
  }

  /** A promise-returning operation that settled as it was issued: in flight until its awaiter resumes. */
  settledNow(op: string): void {
    this.flow.begin(op);
    this.flow.end();
  }

  /** In a tl.parallel branch, `use` of direction `d` must be this branch's alone. */
  private claim(use: 'send' | 'recv', d: number): void {
    const region = this.flow.region;
    if (region === null) return;
    const b = this.flow.branch;
    const other = region.claim(`${use} ${DIRECTIONS[d]}`, b);
    if (other >= 0) {
      throw this.error(
        'ERR_KERNEL_CONCURRENCY',
        `branches ${Math.min(b, other)} and ${Math.max(b, other)} of tl.parallel both ${use} ${DIRECTIONS[d]}: a direction's queue has one writer and one reader, and two branches on it would take turns in wall-clock order; give each branch its own directions, got a second ${use} on '${DIRECTIONS[d]}'`,
      );
    }
  }

  /** Advance this flow's clock by a local op's cost. */
  advance(ps: number, op = 'compute'): void {
    this.enter(op);
    const trace = this.pe.env.trace;
    if (trace && ps > 0) trace.span(this.pe.id, op, this.clock.nowPs, this.clock.nowPs + ps);
    this.clock.advance(ps);
  }

  error(code: 'ERR_INVALID_ARG' | 'ERR_OUT_OF_BOUNDS' | 'ERR_OUT_OF_MEMORY' | 'ERR_KERNEL_CONCURRENCY', message: string): KernbenchError {
    return new KernbenchError(code, `${this.name} on ${this.pe.env.machine.describePe(this.pe.id)} at ${formatPs(this.clock.nowPs)}: ${message}`, {
      pe: this.pe.coord,
      kernel: this.name,
      atPs: this.clock.nowPs,
    });
  }
}

// Runs on: executor threads. Owns: the memory half of `tl` (./context.ts
// extends it; it extends the math half, ./tile-ops.ts): a PE's shard of a
// tensor, loads, stores and TCM scratch, each charged to the memory it touches.
// TCM, and a space without contention, cost their modelled time on the flow's
// clock; a cube's SRAM and HBM channels are shared by its PEs, so an access
// there is a request through the PE's port at the cube's memory arbiter
// (./memory-port.ts, built here and owned by this half). It changes when the
// memory model does. The flow's one-operation-in-flight rule and the kernel's
// errors are the face's (./context.ts), asked for through the abstract members.
import { bytesPerElement, type DType } from '../dtype/index.js';
import { formatPs, KernbenchError } from '../errors.js';
import type { PeChannels } from '../ipcq/channel.js';
import { allocate } from '../shm/allocator.js';
import type { ShardDesc, TensorDesc } from '../shm/tensor-desc.js';
import { stepQuantumPs } from '../sync/step-queue.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import type { KernelRun } from '../tile/slab.js';
import { shapeSize, toShape, type Tile } from '../tile/tile.js';
import type { VirtualClock } from '../time/virtual-clock.js';
import type { PeCoord } from '../topology/machine.js';
import { Flow } from './flow.js';
import { MemoryPort } from './memory-port.js';
import { raceHooksFor, type RaceHooks } from './race-hooks.js';
import { TileOps } from './tile-ops.js';

/** What a kernel needs of the PE it runs on (lib/pe/pe-runtime.ts provides it). */
export interface KernelPe {
  readonly id: number;
  readonly coord: PeCoord;
  readonly env: ThreadEnv;
  readonly clock: VirtualClock;
  /** DMA channels per direction. */
  readonly channels: PeChannels;
  /** The ctl word counting the settled ops of one of this PE's channels. */
  chanDoneWord(channel: number): number;
}

export abstract class MemoryOps extends TileOps {
  /** This context's flow of control: the kernel's main flow, or one branch of a tl.parallel. */
  /** @internal (tl.parallel's engine reads a branch's) */
  readonly flow: Flow;
  /** The PE's request slot at its cube's memory arbiter. */
  private readonly port: MemoryPort;
  /** The --check-races record's hooks (no-ops without the check). */
  protected readonly race: RaceHooks;
  /** @internal Bytes of TCM scratch this kernel holds (released by the runtime at kernel end). */
  scratchBytes = 0;

  constructor(
    protected readonly pe: KernelPe,
    /** This kernel run's identity: the tile memory it makes is its own (lib/tile/slab.ts). */
    run: KernelRun | undefined,
    /** A tl.parallel branch's flow; none for the kernel's main flow. */
    flow: Flow | undefined,
  ) {
    super(pe.env.costs, pe.env.plan.noData, run);
    const { env } = pe;
    this.flow = flow ?? new Flow(pe.clock, env.shared.layout.peActor(pe.id), null, -1);
    this.port = new MemoryPort(env, pe.id);
    this.race = raceHooksFor(env, pe.id);
  }

  /** @internal The span of a quantum of the step queue of this PE's thread, or 0: the ring steps of its kernels take their turns as they yield (lib/sync/step-queue.ts). */
  get stepQuantumPs(): number {
    return stepQuantumPs(this.pe.env);
  }

  /**
   * @internal The quantum of `quantumPs` this flow's clock is in now (a ring step's turn in the
   * step queue, lib/ccl/steps.ts): a small integer, where a time returned through a call V8
   * does not inline is a new heap number.
   */
  quantumNow(quantumPs: number): number {
    return Math.floor(this.clock.nowPs / quantumPs);
  }

  /** This flow's clock (the PE's, or a tl.parallel branch's own). */
  protected get clock(): VirtualClock {
    return this.flow.clock;
  }

  /** The kernel's name (the face's), for errors that name no branch. */
  abstract readonly name: string;

  /** Refuse `op` while another tl operation of this flow is in flight (lib/kernel/flow.ts). */
  protected abstract enter(op: string): void;

  /** The operation in flight settled with `value`. */
  protected abstract settledAs<T>(value: T): T;

  /** The operation in flight failed. */
  protected abstract failedWith(e: unknown): never;

  /** This PE's shard of `t`. */
  shard(t: TensorDesc): ShardDesc {
    const c = this.pe.coord;
    const s = t.shards.find((x) => x.sip === c.sip && x.cube === c.cube && x.pe === c.pe);
    if (!s) throw this.error('ERR_TENSOR_PLACEMENT', `tensor '${t.name}' has no shard on this PE; its shards are on ${t.shards.map((x) => `(${x.sip},${x.cube},${x.pe})`).join(' ')}`);
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
    const shape = whole ? (t.shape.length === 1 ? [s.cols[1]] : [s.rows[1], s.cols[1]]) : [count];
    const tile = this.values.load(this.pe.env.shared.arena, s.arenaOffset + offset * bpe, t.dtype, shape, count, opts.inPlace === true);
    this.race.access(false, t, s, offset, count, this.clock.nowPs);
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
    this.race.scratch(desc);
    return desc;
  }

  /** Store `tile` into this PE's shard of `t` at element `offset`. */
  store(t: TensorDesc, tile: Tile, opts: { offset?: number } = {}): Promise<void> {
    this.enter('store');
    const s = this.shard(t);
    const bpe = bytesPerElement(t.dtype);
    const offset = opts.offset ?? 0;
    this.checkBounds('store', t, s, offset, tile.size);
    this.values.store(this.pe.env.shared.arena, s.arenaOffset + offset * bpe, t.dtype, tile);
    this.race.access(true, t, s, offset, tile.size, this.clock.nowPs);
    return this.memoryAccess('store', s, tile.size * bpe, undefined);
  }

  /**
   * Charge an access of `bytes` to the shard's memory. TCM is the PE's own; a
   * cube's SRAM and HBM channels are shared by its PEs, so an access there is a
   * request at the cube's memory arbiter through the PE's port (./memory-port.ts),
   * answered with the completion time.
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
      // Several branches may meet this, in wall-clock order: the error names none of them, and the tl.parallel's start time, so it reads the same whichever comes first (issue 23 item 6).
      const where = `${this.name} on ${env.machine.describePe(this.pe.id)} in the tl.parallel begun at ${formatPs(flow.region.startPs)}`;
      throw new KernbenchError('ERR_KERNEL_CONCURRENCY', `${where}: a branch accessed the cube's SRAM or HBM; the PE has one request slot at the cube's memory arbiter, which two branches would fill in wall-clock order; load before tl.parallel or store after it, got an SRAM or HBM access in a branch`, { pe: this.pe.coord, kernel: this.name, atPs: flow.region.startPs });
    }
    const requestedPs = this.clock.nowPs;
    const space = s.space;
    const wait = this.port.request(flow.actor, requestedPs, space, s.sip * env.machine.cubesPerSip + s.cube, bytes);
    flow.begin(op);
    if (wait === null) return Promise.resolve(this.granted(space, requestedPs, value));
    return wait.then(
      () => this.granted(space, requestedPs, value),
      (e: unknown) => this.failedWith(e),
    );
  }

  /**
   * The access asked for at `requestedPs` is granted: the clock moves to its completion.
   * A method, not a closure made by memoryAccess: the runtime bundles keep functions'
   * names (scripts/bundle-runtime.mjs, keepNames), which costs a named closure a
   * property definition each time it is made, on every load (decision 0253).
   */
  private granted<T>(space: string, requestedPs: number, value: T): T {
    this.clock.advanceTo(this.port.donePs());
    this.pe.env.trace?.span(this.pe.id, `${space} access`, requestedPs, this.clock.nowPs);
    return this.settledAs(value);
  }

  private checkBounds(op: string, t: TensorDesc, s: ShardDesc, offset: number, count: number): void {
    const n = s.nbytes / bytesPerElement(t.dtype);
    if (!Number.isInteger(offset) || !Number.isInteger(count) || offset < 0 || count < 0 || offset + count > n) {
      throw this.error('ERR_OUT_OF_BOUNDS', `${op} of elements [${offset}, ${offset + count}) is outside the shard of '${t.name}' (${n} elements, device bytes ${s.deviceOffset}..${s.deviceOffset + s.nbytes} of ${s.space}), got offset ${offset} count ${count}`);
    }
  }
}

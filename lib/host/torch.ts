// Runs on: a host thread. Owns: the PyTorch-shaped facade a bench sees as
// `torch` — tensors, launch, synchronize, torch.ahbm, torch.distributed and
// torch.multiprocessing — bound to one host (main, or one spawned rank).
import type { ResolvedCcl } from '../config/ccl-schema.js';
import type { Topology } from '../config/topology-schema.js';
import { KernbenchError } from '../errors.js';
import type { Kernel } from '../kernel/define.js';
import { isTensorDesc, type TensorDesc } from '../shm/tensor-desc.js';
import type { DType } from '../dtype/index.js';
import { Distributed } from './distributed.js';
import type { HostRuntime, LaunchHandle } from './host-runtime.js';
import { Tensor, type HostArray, type TensorOptions } from './tensor.js';

/** How torch.multiprocessing.spawn reaches the session (main thread only). */
export interface Spawner {
  /** Start the ranks; join() waits for them (and rejects with SpawnError). */
  spawn(fn: (...a: never[]) => unknown, opts: { args: unknown[]; nprocs: number }): Promise<{ join(): Promise<unknown[]> }>;
}

/**
 * A function spawn can run: `fn(rank, ...args, torch)`, exported from a module
 * the session knows (the bench's own file). It may omit trailing parameters.
 */
export type SpawnTarget = (rank: number, ...rest: never[]) => unknown;

/** The `args` a spawn target takes: its parameters after `rank`, without a trailing `torch`. */
export type SpawnArgs<F extends SpawnTarget> = F extends (rank: number, ...rest: infer P) => unknown ? WithoutTorch<P> : never;

type WithoutTorch<P extends unknown[]> = P extends [...infer A, Torch] ? A : P;

/** What each rank of `fn` resolves with (in join()'s array, by rank). */
export type SpawnResult<F extends SpawnTarget> = Awaited<ReturnType<F>>;

export type SpawnOptions<A extends unknown[] = unknown[]> = {
  nprocs: number;
  /** Wait for the ranks (default true). With false, spawn returns a context whose join() waits. */
  join?: boolean;
} & ([] extends A ? { args?: A } : { args: A });

export class SpawnContext<R = unknown> {
  constructor(private readonly ranks: { join(): Promise<unknown[]> }) {}
  /** Wait for every rank; resolves with their return values by rank, rejects with SpawnError. */
  join(): Promise<R[]> {
    // The ranks' values are what `fn` returned, structured-cloned back (numpy() arrays moved, ../host/moved-arrays.ts): SpawnResult<F>.
    return this.ranks.join() as Promise<R[]>;
  }
}

/** torch.multiprocessing: spawn is typed by its target (args checked, results inferred). */
export interface Multiprocessing {
  /** Run `fn(rank, ...args, torch)` on ranks 0..nprocs-1, one per SIP; resolves with their results by rank. */
  spawn<F extends SpawnTarget>(fn: F, opts: SpawnOptions<SpawnArgs<F>> & { join?: true }): Promise<SpawnResult<F>[]>;
  /** With `join: false`: resolves once the ranks started, with a context whose join() waits for them. */
  spawn<F extends SpawnTarget>(fn: F, opts: SpawnOptions<SpawnArgs<F>> & { join: false }): Promise<SpawnContext<SpawnResult<F>>>;
}

/** A kernel's host-side arguments: a device Tensor wherever the kernel takes a TensorDesc. */
export type LaunchArgs<A extends unknown[]> = { [K in keyof A]: TensorDesc extends NonNullable<A[K]> ? A[K] | Tensor : A[K] };

/**
 * torch.ahbm. Methods on a class, not closures per Torch: a rank's code calls
 * them once per spawn, and a new call target each spawn deoptimized the rank
 * function's optimized code (bench barrier_throughput's loop: recompiled on
 * every thread in every round).
 */
class Ahbm {
  constructor(private readonly torch: Torch) {}
  setDevice(sip: number): void {
    const sips = this.torch.host.env.machine.sips;
    if (!Number.isInteger(sip) || sip < 0 || sip >= sips) throw new KernbenchError('ERR_OUT_OF_RANGE', `setDevice: device must be a SIP index in [0, ${sips}), got ${sip}`);
    this.torch.host.device = sip;
  }
  currentDevice(): number {
    return this.torch.host.device;
  }
  deviceCount(): number {
    return this.torch.host.env.machine.sips;
  }
}

export class Torch {
  distributed: Distributed;
  readonly ahbm: { setDevice(sip: number): void; currentDevice(): number; deviceCount(): number };
  readonly multiprocessing: Multiprocessing;

  constructor(
    public host: HostRuntime,
    private readonly rankInfo: { rank: number; nprocs: number },
    private spawner: Spawner | null,
  ) {
    this.distributed = new Distributed(host, rankInfo, host.env.plan.ccl);
    const machine = host.env.machine;
    this.ahbm = new Ahbm(this);
    const spawn = async (fn: SpawnTarget, opts: SpawnOptions & { args?: unknown[] }): Promise<unknown[] | SpawnContext> => {
      const spawner = this.spawner;
      if (!spawner) throw new KernbenchError('ERR_MAIN_THREAD_ONLY', `torch.multiprocessing.spawn is only available to the main host (a spawned rank cannot spawn), got a call from rank ${this.rankInfo.rank}`);
      const sips = machine.sips;
      if (!Number.isInteger(opts.nprocs) || opts.nprocs < 1 || opts.nprocs > sips) {
        throw new KernbenchError('ERR_OUT_OF_RANGE', `spawn: nprocs must be in [1, ${sips}] (one rank per SIP), got ${opts.nprocs}`);
      }
      const ranks = await spawner.spawn(fn, { args: opts.args ?? [], nprocs: opts.nprocs });
      if (opts.join === false) return new SpawnContext(ranks);
      return ranks.join();
    };
    // The overloads of Multiprocessing.spawn narrow what this one implementation returns.
    this.multiprocessing = { spawn: spawn as Multiprocessing['spawn'] };
  }

  /** Point this torch at a new host (main's torch after a session recovered from a failed spawn). */
  rebind(host: HostRuntime, spawner: Spawner | null): void {
    this.host = host;
    this.spawner = spawner;
    this.distributed = new Distributed(host, this.rankInfo, host.env.plan.ccl);
  }

  /** The topology this run simulates. */
  get spec(): Topology {
    return this.host.env.plan.topology;
  }

  /** The resolved CCL configuration of this run. */
  get ccl(): ResolvedCcl {
    return this.host.env.plan.ccl;
  }

  get topologyName(): string {
    return this.host.env.plan.topologyName;
  }

  zeros(shape: readonly number[], opts: TensorOptions = {}): Tensor {
    return Tensor.device(this.host, shape, opts);
  }

  /** Same as zeros: device memory is zero-filled when a session starts and never reused within it. */
  empty(shape: readonly number[], opts: TensorOptions = {}): Tensor {
    return Tensor.device(this.host, shape, opts);
  }

  /** A host tensor from values (PyTorch's from_numpy). */
  fromArray(values: ArrayLike<number> | HostArray, opts: { shape?: readonly number[]; dtype?: DType } = {}): Tensor {
    if ('data' in values && 'shape' in values) return Tensor.hostArray(this.host, values.data, opts.shape ?? values.shape, opts.dtype ?? values.dtype);
    return Tensor.hostArray(this.host, values, opts.shape ?? [values.length], opts.dtype ?? 'f32');
  }

  /**
   * Launch `kernel` on every PE that holds a shard of the first tensor argument
   * (programId = the shard's index). Returns a handle; awaiting it is worker-wait.
   */
  launch<A extends unknown[]>(name: string, kernel: Kernel<A>, ...args: LaunchArgs<A>): LaunchHandle {
    for (const a of args) if (a instanceof Tensor) this.requireLive(a, name);
    const wire = args.map((a) => (a instanceof Tensor ? a.toDesc() : a));
    const first = wire.find(isTensorDesc);
    if (!first) throw new KernbenchError('ERR_NEEDS_DEVICE_TENSOR', `launch '${name}': the kernel runs on the PEs of its first tensor argument, got no device tensor among ${args.length} argument(s)`);
    const m = this.host.env.machine;
    const pes = first.shards.map((s) => m.peId(s));
    if (new Set(pes).size !== pes.length) throw new KernbenchError('ERR_SHARED_PE', `launch '${name}': two shards of '${first.name}' share a PE; give each PE one shard (DPPolicy numPes), got PEs ${pes.join(', ')}`);
    return this.host.launch(name, kernel, wire, { pes, world: { kind: 'none', w: pes.length, h: 1, pes } });
  }

  /** A tensor from before a failed spawn points into discarded device memory: using it would corrupt new tensors. */
  requireLive(t: Tensor, what: string): void {
    if (!t.ownedBy(this.host)) {
      throw new KernbenchError('ERR_STALE_TENSOR', `${what}: tensor '${t.name}' was allocated in device memory that a failed spawn discarded (the session restarted on fresh buffers); allocate it again, got a tensor from before the restart`);
    }
  }

  /** Wait for every launch and collective of this host. */
  synchronize(): Promise<void> {
    return this.host.synchronize();
  }
}

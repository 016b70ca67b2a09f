// Runs on: a host thread. Owns: torch.distributed for one host — the process
// group (ranks = SIPs, rank r on SIP r), and collectives, which are kernels
// launched on the PEs that hold the tensor's shards.
import type { ResolvedCcl } from '../config/ccl-schema.js';
import { loadAlgorithm } from '../ccl/registry.js';
import { checkReduceOp, type ReduceOp } from '../ccl/reduce-op.js';
import { ringWorld, type World } from '../ccl/world.js';
import { KernbenchError } from '../errors.js';
import type { Kernel } from '../kernel/define.js';
import type { HostRuntime, LaunchHandle } from './host-runtime.js';
import type { Tensor } from './tensor.js';

export const BACKENDS = ['ahbm'] as const;

/** A finished or running collective (PyTorch's Work), with its virtual timing. */
export class Work {
  constructor(readonly handle: LaunchHandle) {}
  /** Wait for completion (worker-wait; idempotent). */
  wait(): Promise<void> {
    return this.handle.wait();
  }
  isCompleted(): boolean {
    return this.handle.done;
  }
  /** This rank's part of the collective: max over its PEs of their execution time, in ns. */
  get critNs(): number {
    return this.handle.critPs / 1000;
  }
}

export class Distributed {
  private group: { backend: string; worldSize: number } | undefined;
  private collectives = 0;

  constructor(
    private readonly host: HostRuntime,
    /** This host's rank and the number of spawned ranks (main thread: rank 0 of 1). */
    private readonly rankInfo: { rank: number; nprocs: number },
    private readonly ccl: ResolvedCcl,
  ) {}

  /** Join the process group (a barrier across the ranks). IPCQ rings are preallocated per (PE, direction); this selects how they are wired. */
  async initProcessGroup(opts: { backend: string; worldSize?: number }): Promise<void> {
    if (!BACKENDS.includes(opts.backend as (typeof BACKENDS)[number])) {
      throw new KernbenchError('ERR_INVALID_ARG', `initProcessGroup: backend must be one of ${BACKENDS.join('|')}, got '${opts.backend}'`);
    }
    if (this.group) throw new KernbenchError('ERR_INVALID_ARG', `initProcessGroup: already initialised with backend '${this.group.backend}'`);
    const ws = opts.worldSize ?? this.rankInfo.nprocs;
    if (ws !== this.rankInfo.nprocs) throw new KernbenchError('ERR_INVALID_ARG', `initProcessGroup: worldSize must equal the spawned ranks (${this.rankInfo.nprocs}), got ${ws}`);
    this.group = { backend: opts.backend, worldSize: ws };
    await this.barrier();
  }

  isInitialized(): boolean {
    return this.group !== undefined;
  }

  getRank(): number {
    return this.rankInfo.rank;
  }

  getWorldSize(): number {
    return this.requireGroup().worldSize;
  }

  getBackend(): string {
    return this.requireGroup().backend;
  }

  /** Block until every rank of the group arrives. */
  async barrier(): Promise<void> {
    const ws = this.group?.worldSize ?? this.rankInfo.nprocs;
    await this.host.barrier(ws, Array.from({ length: ws }, (_, r) => r));
  }

  /** All-reduce `t` in place on every rank with the configured algorithm. */
  async allReduce(t: Tensor, opts: { op?: ReduceOp; asyncOp?: boolean } = {}): Promise<Work> {
    const op = checkReduceOp(opts.op ?? 'sum');
    const algo = await loadAlgorithm(this.ccl.module);
    const work = new Work(this.launchCollective('all_reduce', algo.allReduce, t, [op]));
    if (!opts.asyncOp) await work.wait();
    return work;
  }

  /**
   * Launch a collective kernel: on each PE holding a shard of `t`, with a world
   * made of the PEs at the same (cube, pe) on every rank's SIP. Every rank must
   * call it with a tensor of the same layout (the collective contract).
   */
  launchCollective<A extends unknown[]>(name: string, kernel: Kernel<A>, t: Tensor, extra: unknown[]): LaunchHandle {
    const g = this.requireGroup();
    const desc = t.toDesc();
    const rank = this.rankInfo.rank;
    const m = this.host.env.machine;
    const pes: number[] = [];
    const worlds: World[] = [];
    for (const s of desc.shards) {
      if (s.sip !== rank) {
        throw new KernbenchError('ERR_INVALID_ARG', `${name}: rank ${rank}'s tensor must live on SIP ${rank} (call torch.ahbm.setDevice(rank) before allocating), got a shard on SIP ${s.sip}`);
      }
      pes.push(m.peId(s));
      worlds.push(ringWorld(Array.from({ length: g.worldSize }, (_, q) => m.peId({ sip: q, cube: s.cube, pe: s.pe }))));
    }
    const tag = this.collectives++;
    return this.host.launch(name, kernel, [desc, ...extra], { pes, world: worlds, ranks: pes.map(() => rank), tag, collective: true });
  }

  private requireGroup(): { backend: string; worldSize: number } {
    if (!this.group) throw new KernbenchError('ERR_INVALID_ARG', 'the default process group is not initialised; call torch.distributed.initProcessGroup({backend: "ahbm"}) first');
    return this.group;
  }
}

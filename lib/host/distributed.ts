// Runs on: a host thread. Owns: torch.distributed for one host — the process
// group (ranks = SIPs, rank r on SIP r), subgroups (newGroup), and collectives,
// which are kernels launched on the PEs that hold the tensor's shards
// (lib/ccl/placement.ts decides which PEs and worlds).
//
// PyTorch semantics: collectives work in place, return a Work, and wait for it
// unless `asyncOp` is set. Every member of a group must call the same
// collectives in the same order with tensors of the same layout.
import type { ResolvedCcl } from '../config/ccl-schema.js';
import { BARRIER_SENDS, groupBarrier } from '../ccl/collectives/barrier.js';
import { ALL_GATHER_SENDS, allGather } from '../ccl/collectives/all_gather.js';
import { ALL_TO_ALL_SENDS, allToAll } from '../ccl/collectives/all_to_all.js';
import { allToAllPairwise, allToAllPairwiseList } from '../ccl/collectives/all_to_all_pairwise.js';
import { p2pBatch, type P2PKernelOp } from '../ccl/collectives/p2p.js';
import { BROADCAST_SENDS, broadcast } from '../ccl/collectives/broadcast.js';
import { REDUCE_SCATTER_SENDS, reduceScatter } from '../ccl/collectives/reduce_scatter.js';
import { placeCollective, type Arrangement, type CollectivePlacement } from '../ccl/placement.js';
import { ProcessGroup, nextChannelSet } from '../ccl/process-group.js';
import { checkReduceOp, type ReduceOp } from '../ccl/reduce-op.js';
import type { AllReduceAlgorithm, CollectiveAlgorithm } from '../ccl/catalog.js';
import type { CollectiveName } from '../ccl/define-algorithm.js';
import { KernbenchError } from '../errors.js';
import type { Kernel } from '../kernel/define.js';
import type { HostRuntime, LaunchHandle } from './host-runtime.js';
import type { Tensor } from './tensor.js';
import { checkEvenSplits, checkOnePe, checkPair, checkSends, placementError, rootList } from './call-checks.js';
import type { Direction } from '../shm/layout.js';
import { P2POp, checkPeerChannels, p2pKind, peerGroupRank, type RecvOptions, type SendOptions } from './p2p.js';

export const BACKENDS = ['ahbm'] as const;

export { ProcessGroup };

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
  /** When this rank's part of the collective ended: the latest end over its PEs, in ns of virtual time. */
  get endNs(): number {
    return this.handle.endPs / 1000;
  }
}

/** Options every collective takes. */
export interface CollectiveOptions {
  /** The group to run on (default: every rank). */
  group?: ProcessGroup;
  /** Return at once; wait with `work.wait()` (default false). */
  asyncOp?: boolean;
}

// Imported on a thread's first collective, not at the top: it brings zod, which most executor threads never need (decision 0025); once, since an import() goes through Node's loader each call (decision 0283).
let catalog: Promise<typeof import('../ccl/catalog.js')> | undefined;
const catalogModule = (): Promise<typeof import('../ccl/catalog.js')> => (catalog ??= import('../ccl/catalog.js'));

export class Distributed {
  private world: { backend: string; group: ProcessGroup } | undefined;
  private collectives = 0;
  /** The configured all-reduce once loaded (a failed load is not kept, as loadAlgorithmModule's). */
  private allReduceAlgo: AllReduceAlgorithm | undefined;
  /** Every group this rank has made, the world first: a new group's channel set depends on them (nextChannelSet). */
  private readonly groups: ProcessGroup[] = [];

  constructor(
    private readonly host: HostRuntime,
    /** This host's rank and the number of spawned ranks (main thread: rank 0 of 1). */
    private readonly rankInfo: { rank: number; nprocs: number },
    private readonly ccl: ResolvedCcl,
  ) {}

  /** Join the process group (a barrier across the ranks); the backend defaults to the one there is, as PyTorch picks one. IPCQ rings are preallocated per (channel set, PE, direction); the world's collectives use set 0. */
  async initProcessGroup(opts: { backend?: string; worldSize?: number } = {}): Promise<void> {
    const backend = opts.backend ?? BACKENDS[0];
    if (!BACKENDS.includes(backend as (typeof BACKENDS)[number])) {
      throw new KernbenchError('ERR_INVALID_ARG_VALUE', `initProcessGroup: backend must be one of ${BACKENDS.join('|')}, got '${backend}'`);
    }
    if (this.world) throw new KernbenchError('ERR_ALREADY_INITIALIZED', `initProcessGroup: already initialised with backend '${this.world.backend}', got a second call with backend '${backend}'`);
    const ws = opts.worldSize ?? this.rankInfo.nprocs;
    if (ws !== this.rankInfo.nprocs) throw new KernbenchError('ERR_WORLD_SIZE_MISMATCH', `initProcessGroup: worldSize must equal the spawned ranks (${this.rankInfo.nprocs}), got ${ws}`);
    this.world = { backend, group: ProcessGroup.world(ws) };
    this.groups.push(this.world.group);
    await this.barrier();
  }

  isInitialized(): boolean {
    return this.world !== undefined;
  }

  /** This rank in `group` (default: the global rank); -1 if it is not a member. */
  getRank(group?: ProcessGroup): number {
    return group ? group.groupRank(this.rankInfo.rank) : this.rankInfo.rank;
  }

  /** Ranks in `group` (default: every rank). */
  getWorldSize(group?: ProcessGroup): number {
    return (group ?? this.requireWorld().group).size;
  }

  getBackend(): string {
    return this.requireWorld().backend;
  }

  /**
   * A group of `ranks` (sorted; group rank i is the i-th smallest). Like
   * PyTorch's new_group, every rank must call it with the same ranks in the
   * same order, even non-members; only members may run collectives on it.
   * Its collectives run on a channel set of their own (lib/ccl/process-group.ts),
   * so they never meet another group's traffic.
   */
  newGroup(ranks: readonly number[]): ProcessGroup {
    const ws = this.requireWorld().group.size;
    const group = new ProcessGroup(ranks, ws, nextChannelSet(ranks, this.groups));
    this.groups.push(group);
    return group;
  }

  /**
   * Block until every rank of the group arrives. The whole world uses the host
   * barrier (a counter of all ranks' arrivals); a subgroup runs a tiny
   * collective kernel (lib/ccl/collectives/barrier.ts), since that counter
   * cannot count a subset.
   */
  barrier(opts?: { group?: ProcessGroup }): Promise<void> {
    // The world's barrier is the host's promise itself, with no async layer here and no options object made (the barrier bench's loop).
    const ws = this.world?.group.size ?? this.rankInfo.nprocs;
    const group = opts?.group;
    if (!group || group.size === ws) return this.host.barrier(ws);
    return this.subgroupBarrier(group);
  }

  private async subgroupBarrier(group: ProcessGroup): Promise<void> {
    const me = this.memberRank('barrier', group);
    group.checkChannelSet('barrier', this.ccl.channel_sets);
    const m = this.host.env.machine;
    const pes = group.ranks.map((q) => m.peId({ sip: q, cube: 0, pe: 0 }));
    const world = { kind: 'ring_1d' as const, w: group.size, h: 1, pes, set: group.set };
    await this.host.launch('barrier', groupBarrier, [], { pes: [pes[me]], world, ranks: [me], tag: this.collectives++, collective: true, sends: checkSends('barrier', BARRIER_SENDS) }).wait();
  }

  /** All-reduce `t` in place on every rank of the group with the configured algorithm (ccl.yaml `module`, `topology` and `params`). */
  async allReduce(t: Tensor, opts: CollectiveOptions & { op?: ReduceOp } = {}): Promise<Work> {
    const op = checkReduceOp(opts.op ?? 'sum');
    const algo = (this.allReduceAlgo ??= await (await catalogModule()).loadAllReduce(this.ccl)); // the module the run resolved, by URL
    const desc = t.toDesc();
    if (algo.arrangement.kind === 'hierarchical') {
      const sizes = new Set(desc.shards.map((s) => s.nbytes));
      if (sizes.size > 1) throw new KernbenchError('ERR_UNEVEN_SPLIT', `allReduce (${algo.module}): every shard is one participant and must have the same size, got shard sizes ${[...sizes].join(', ')} bytes`);
    }
    const place = this.place('all_reduce', t, algo.arrangement, opts.group);
    return this.run(this.launchPlaced('all_reduce', algo.allReduce, place, [desc, op, place.shape, algo.params], algo.sends), opts);
  }

  /** Broadcast `t` from global rank `src` to every rank of the group, in place (ring, lib/ccl/collectives/broadcast.ts). */
  async broadcast(t: Tensor, opts: CollectiveOptions & { src: number }): Promise<Work> {
    const group = opts.group ?? this.requireWorld().group;
    const src = group.groupRank(opts.src);
    if (src < 0) throw new KernbenchError('ERR_INVALID_RANK', `broadcast: src must be a global rank in ${group}, got ${opts.src}`);
    return this.run(this.launchCollective('broadcast', broadcast, t, [src], { group, sends: BROADCAST_SENDS }), opts);
  }

  /**
   * Gather every rank's `t` (n elements) into `out` (ws * n elements): rank r's
   * input lands at [r n, (r + 1) n) — PyTorch's all_gather_into_tensor. Both
   * tensors must be one shard each, on the same PE.
   */
  async allGather(out: Tensor, t: Tensor, opts: CollectiveOptions = {}): Promise<Work> {
    const group = opts.group ?? this.requireWorld().group;
    checkPair('allGather', out, t, out.numel === group.size * t.numel, `out must have ${group.size} x ${t.numel} = ${group.size * t.numel} elements (world size x input)`);
    return this.run(this.launchCollective('all_gather', allGather, t, [out.toDesc(), t.toDesc()], { group, leadingTensor: false, sends: ALL_GATHER_SENDS }), opts);
  }

  /**
   * Reduce every rank's `t` (ws * n elements) and leave block r (n elements)
   * on rank r in `out` — PyTorch's reduce_scatter_tensor. Both tensors must be
   * one shard each, on the same PE.
   */
  async reduceScatter(out: Tensor, t: Tensor, opts: CollectiveOptions & { op?: ReduceOp } = {}): Promise<Work> {
    const op = checkReduceOp(opts.op ?? 'sum');
    const group = opts.group ?? this.requireWorld().group;
    checkPair('reduceScatter', out, t, t.numel === group.size * out.numel, `the input must have ${group.size} x ${out.numel} = ${group.size * out.numel} elements (world size x out)`);
    return this.run(this.launchCollective('reduce_scatter', reduceScatter, t, [out.toDesc(), t.toDesc(), op], { group, leadingTensor: false, sends: REDUCE_SCATTER_SENDS }), opts);
  }

  /**
   * All-to-all into one tensor — PyTorch's all_to_all_single. Rank r's `t` holds
   * `inputSplitSizes[d]` elements for each group rank d, in rank order; its `out`
   * receives `outputSplitSizes[s]` elements from each rank s, in rank order
   * (absent: p equal blocks). Both tensors must be one shard each, on the same PE.
   * With peer channels for the group (ccl.peer_ranks >= its size) it is the
   * pairwise exchange (lib/ccl/collectives/all_to_all_pairwise.ts), which takes
   * uneven splits; else the ring store-and-forward (lib/ccl/collectives/all_to_all.ts),
   * which takes even splits only (ERR_UNEVEN_SPLIT naming the setting).
   */
  async allToAllSingle(out: Tensor, t: Tensor, opts: CollectiveOptions & { outputSplitSizes?: readonly number[]; inputSplitSizes?: readonly number[] } = {}): Promise<Work> {
    const group = opts.group ?? this.requireWorld().group;
    const p = group.size;
    const me = this.memberRank('allToAllSingle', group);
    const inSplits = this.splits('inputSplitSizes', opts.inputSplitSizes, t.numel, p);
    const outSplits = this.splits('outputSplitSizes', opts.outputSplitSizes, out.numel, p);
    checkPair('allToAllSingle', out, t, inSplits[me] === outSplits[me], `a rank's block for itself must be the same size in both splits (input ${inSplits[me]}, output ${outSplits[me]})`);
    const args = [out.toDesc(), t.toDesc()];
    if (this.ccl.collective_modules?.all_to_all !== undefined) return this.allToAllWithModule(group, out, t, inSplits, outSplits, opts);
    if (p > 1 && (this.ccl.peer_ranks ?? 0) >= p) return this.run(this.launchCollective('all_to_all', allToAllPairwise, t, [...args, inSplits, outSplits], { group, leadingTensor: false }), opts);
    checkEvenSplits(group, out, t, inSplits, outSplits, `without peer channels the ring all-to-all takes ${p} equal blocks only; run with ccl.peer_ranks >= ${p} (--set ccl.peer_ranks=${p}) for the pairwise exchange`);
    return this.run(this.launchCollective('all_to_all', allToAll, t, args, { group, leadingTensor: false, sends: ALL_TO_ALL_SENDS }), opts);
  }

  /** Split sizes of a tensor of `numel` elements over `p` ranks: `given` checked, or p equal blocks. */
  private splits(name: string, given: readonly number[] | undefined, numel: number, p: number): number[] {
    if (given === undefined) {
      if (numel % p !== 0) throw new KernbenchError('ERR_UNEVEN_SPLIT', `allToAllSingle: without ${name} a tensor is cut into ${p} equal blocks, got ${numel} elements`);
      return Array.from({ length: p }, () => numel / p);
    }
    const sum = given.reduce((a, b) => a + b, 0);
    if (given.length !== p || !given.every((x) => Number.isInteger(x) && x >= 0) || sum !== numel) {
      throw new KernbenchError('ERR_INVALID_SPLIT_SIZES', `allToAllSingle: ${name} must be ${p} non-negative integers summing to the tensor's ${numel} elements, got [${given.join(', ')}]`);
    }
    return [...given];
  }

  // ---- Collectives run by an algorithm module (docs/algorithms/partners.md, decision 0105) ----

  /** allToAllSingle with the module ccl.yaml's `collectives.all_to_all` names. */
  private async allToAllWithModule(group: ProcessGroup, out: Tensor, t: Tensor, inSplits: number[], outSplits: number[], opts: CollectiveOptions): Promise<Work> {
    const algo = await this.collectiveModule('all_to_all', '', group);
    if (algo.meta.splits !== 'uneven') checkEvenSplits(group, out, t, inSplits, outSplits, `all_to_all module '${algo.module}' takes ${group.size} equal blocks only (its meta.splits is 'even')`);
    return this.run(this.launchCollective('all_to_all', algo.kernel, t, [out.toDesc(), t.toDesc(), inSplits, outSplits, algo.params], { group, leadingTensor: false, sends: algo.meta.sends }), opts);
  }

  /**
   * Reduce every group rank's `t` onto global rank `dst`, in place there
   * (PyTorch's reduce); the other ranks' tensors are left as they were. The
   * module is ccl.yaml's `collectives.reduce` (default binomial_reduce).
   */
  async reduce(t: Tensor, opts: CollectiveOptions & { dst: number; op?: ReduceOp }): Promise<Work> {
    const op = checkReduceOp(opts.op ?? 'sum');
    const group = opts.group ?? this.requireWorld().group;
    const dst = this.rootRank('reduce', 'dst', opts.dst, group);
    const algo = await this.collectiveModule('reduce', 'binomial_reduce', group);
    return this.run(this.launchCollective('reduce', algo.kernel, t, [op, dst, algo.params], { group, sends: algo.meta.sends }), opts);
  }

  /**
   * Gather every group rank's `t` (n elements) on global rank `dst` (PyTorch's
   * gather): into `gatherList`, p tensors of n elements (block s from group
   * rank s), or one tensor of p x n elements (the tensor form); other ranks
   * pass none. Every tensor is one shard on the input's PE. The module is
   * ccl.yaml's `collectives.gather` (default binomial_gather).
   */
  async gather(t: Tensor, opts: CollectiveOptions & { dst?: number; gatherList?: readonly Tensor[] | Tensor }): Promise<Work> {
    const group = opts.group ?? this.requireWorld().group;
    const dst = this.rootRank('gather', 'dst', opts.dst ?? 0, group);
    const outs = group.groupRank(this.rankInfo.rank) === dst ? rootList('gather', 'gatherList', t, opts.gatherList, group) : [];
    const algo = await this.collectiveModule('gather', 'binomial_gather', group);
    return this.run(this.launchCollective('gather', algo.kernel, t, [outs, t.toDesc(), dst, algo.params], { group, leadingTensor: false, sends: algo.meta.sends }), opts);
  }

  /**
   * Scatter from global rank `src` (PyTorch's scatter): `scatterList` there, p
   * tensors of n elements or one tensor of p x n, block s to group rank s,
   * lands in every rank's `t` (n elements); other ranks pass none. Every tensor
   * is one shard on `t`'s PE. The module is ccl.yaml's `collectives.scatter`
   * (default binomial_scatter).
   */
  async scatter(t: Tensor, opts: CollectiveOptions & { src?: number; scatterList?: readonly Tensor[] | Tensor }): Promise<Work> {
    const group = opts.group ?? this.requireWorld().group;
    const src = this.rootRank('scatter', 'src', opts.src ?? 0, group);
    const ins = group.groupRank(this.rankInfo.rank) === src ? rootList('scatter', 'scatterList', t, opts.scatterList, group) : [];
    const algo = await this.collectiveModule('scatter', 'binomial_scatter', group);
    return this.run(this.launchCollective('scatter', algo.kernel, t, [t.toDesc(), ins, src, algo.params], { group, leadingTensor: false, sends: algo.meta.sends }), opts);
  }

  /** The group rank of global rank `global`, the root of collective `name`. */
  private rootRank(name: string, field: string, global: number, group: ProcessGroup): number {
    this.memberRank(name, group);
    const r = group.groupRank(global);
    if (r < 0) throw new KernbenchError('ERR_INVALID_RANK', `${name}: ${field} must be a global rank in ${group}, got ${global}`);
    return r;
  }

  /**
   * The module of collective `name`: ccl.yaml's `collectives` choice, else
   * shipped module `fallback`. One that addresses peers needs peer channels
   * for the group: refused here, before the launch, naming the setting.
   */
  private async collectiveModule(name: CollectiveName, fallback: string, group: ProcessGroup): Promise<CollectiveAlgorithm> {
    const { loadCollective } = await catalogModule();
    const algo = await loadCollective(this.ccl, name, fallback);
    const p = group.size;
    if (algo.meta.peers === true && p > 1 && (this.ccl.peer_ranks ?? 0) < p) {
      throw new KernbenchError('ERR_NO_PEER_CHANNELS', `${name} on ${group}: module '${algo.module}' addresses peers by rank; run with ccl.peer_ranks >= ${p} (--set ccl.peer_ranks=${p}), got ccl.peer_ranks = ${this.ccl.peer_ranks ?? 0}`);
    }
    return algo;
  }

  // ---- point-to-point and the all-to-all of tensor lists (issue 24; docs/algorithms/p2p.md) ----

  /** PyTorch's P2POp, as `new torch.distributed.P2POp(dist.isend, t, peer)`. */
  readonly P2POp = P2POp;

  /**
   * All-to-all of tensor lists — PyTorch's all_to_all: `inputList[d]` goes to
   * group rank d, `outputList[s]` receives group rank s's tensor for this rank.
   * Sizes may differ from block to block (rank s's `inputList[r]` must have the
   * size of rank r's `outputList[s]`). Every tensor is one shard, all on one PE,
   * of one dtype. The pairwise exchange (lib/ccl/collectives/all_to_all_pairwise.ts),
   * so a group of more than one rank needs peer channels (ccl.peer_ranks >= its size).
   */
  async allToAll(outputList: readonly Tensor[], inputList: readonly Tensor[], opts: CollectiveOptions = {}): Promise<Work> {
    const group = opts.group ?? this.requireWorld().group;
    const p = group.size;
    const me = this.memberRank('allToAll', group);
    if (outputList.length !== p || inputList.length !== p) {
      throw new KernbenchError('ERR_TENSOR_LIST_LENGTH', `allToAll on ${group}: outputList and inputList must hold one tensor per group rank (${p}), got ${outputList.length} and ${inputList.length}`);
    }
    checkPeerChannels(this.ccl.peer_ranks, 'allToAll', group);
    const all = [...outputList, ...inputList];
    for (const x of all) checkPair('allToAll', x, inputList[0], true, '');
    checkPair('allToAll', outputList[me], inputList[me], outputList[me].numel === inputList[me].numel, `a rank's own block must have the same size in both lists`);
    const place = this.place('all_to_all', inputList[0], { kind: 'ring' }, group);
    return this.run(this.launchPlaced('all_to_all', allToAllPairwiseList, place, [outputList.map((x) => x.toDesc()), inputList.map((x) => x.toDesc())]), opts);
  }

  /** Send `t` to global rank `dst` (or `groupDst` of `group`) and wait until the send has finished (PyTorch's send). */
  async send(t: Tensor, dst: number | undefined, opts: SendOptions = {}): Promise<void> {
    await this.isend(t, dst, opts).wait();
  }

  /** Receive into `t` from global rank `src` (or `groupSrc` of `group`); returns the source's global rank (PyTorch's recv). */
  async recv(t: Tensor, src: number | undefined, opts: RecvOptions = {}): Promise<number> {
    const group = opts.group ?? this.requireWorld().group;
    const q = this.peerRank('recv', group, src, opts.groupSrc);
    await this.launchP2P('recv', [{ kind: 'recv', t, peer: q }], group).wait();
    return group.globalRank(q);
  }

  /**
   * Start sending `t` to global rank `dst` (or `groupDst` of `group`): a kernel on
   * the PE that holds `t`, sending to the peer's PE at the same (cube, pe) over
   * the peer ring of the pair. The k-th send to a rank meets its k-th receive
   * from this one. Ops run one after the other on the PE, in call order.
   */
  isend(t: Tensor, dst: number | undefined, opts: SendOptions = {}): Work {
    const group = opts.group ?? this.requireWorld().group;
    return this.launchP2P('send', [{ kind: 'send', t, peer: this.peerRank('isend', group, dst, opts.groupDst) }], group);
  }

  /** Start receiving into `t` from global rank `src` (or `groupSrc` of `group`); see isend. */
  irecv(t: Tensor, src: number | undefined, opts: RecvOptions = {}): Work {
    const group = opts.group ?? this.requireWorld().group;
    return this.launchP2P('recv', [{ kind: 'recv', t, peer: this.peerRank('irecv', group, src, opts.groupSrc) }], group);
  }

  /**
   * Run a batch of isend / irecv ops as one kernel whose sends and receives are
   * in flight together (so two ranks may send to each other in one batch, whatever
   * the sizes); returns one Work per op (all the batch's, as its ops end
   * together). Every op must be on the same group, its tensors on one PE.
   */
  batchIsendIrecv(ops: readonly P2POp[]): Work[] {
    if (ops.length === 0) return [];
    const group = ops[0].group ?? this.requireWorld().group;
    const kernelOps = ops.map((op, i) => {
      const g = op.group ?? this.requireWorld().group;
      if (g !== group && (g.ranks.length !== group.ranks.length || g.ranks.some((r, j) => r !== group.ranks[j]) || g.set !== group.set)) {
        throw new KernbenchError('ERR_P2P_MIXED_GROUPS', `batchIsendIrecv: every op must use the same group (one kernel, one world), got ${group} for op 0 and ${g} for op ${i}`);
      }
      const kind = p2pKind(op.op, i, Distributed.prototype.isend, Distributed.prototype.irecv);
      return { kind, t: op.tensor, peer: this.peerRank('batchIsendIrecv', group, op.peer, op.groupPeer) };
    });
    const work = this.launchP2P('p2p_batch', kernelOps, group);
    return ops.map(() => work);
  }

  /** The group rank of a p2p op's peer: global `rank`, or `groupRank` of the group; not this rank. */
  private peerRank(name: string, group: ProcessGroup, rank: number | undefined, groupRank: number | undefined): number {
    return peerGroupRank(name, group, rank, groupRank, this.memberRank(name, group));
  }

  /** One kernel for `ops` on the PE holding their tensors (one shard each, at one (cube, pe) of this rank's SIP). */
  private launchP2P(name: string, ops: readonly { kind: 'send' | 'recv'; t: Tensor; peer: number }[], group: ProcessGroup): Work {
    checkPeerChannels(this.ccl.peer_ranks, name, group);
    checkOnePe(name, ops.map((op) => op.t));
    const place = this.place(name, ops[0].t, { kind: 'ring' }, group);
    const kernelOps: P2PKernelOp[] = ops.map((op) => ({ kind: op.kind, peer: op.peer, t: op.t.toDesc() }));
    return new Work(this.launchPlaced(name, p2pBatch, place, [kernelOps]));
  }

  // ---- end of point-to-point ----

  /**
   * Launch a collective kernel on each PE holding a shard of `t`, with a world
   * over the group's ranks (default: a ring of the PEs at the same (cube, pe)
   * on every member's SIP; see lib/ccl/placement.ts). The kernel's arguments
   * are `[t, ...extra]`, or `extra` alone with `leadingTensor: false`. Every
   * member must call it with a tensor of the same layout (the collective contract).
   * `sends` declares the directions the kernel sends on (default: any): a send in another
   * is refused, and a kernel that sends one way on a ring of two is alone on its link.
   */
  launchCollective<A extends unknown[]>(name: string, kernel: Kernel<A>, t: Tensor, extra: unknown[], opts: { group?: ProcessGroup; arrangement?: Arrangement; leadingTensor?: boolean; sends?: readonly Direction[] } = {}): LaunchHandle {
    const sends = checkSends(name, opts.sends);
    const place = this.place(name, t, opts.arrangement ?? { kind: 'ring' }, opts.group);
    return this.launchPlaced(name, kernel, place, opts.leadingTensor === false ? extra : [t.toDesc(), ...extra], sends);
  }

  private place(name: string, t: Tensor, arrangement: Arrangement, group = this.requireWorld().group): CollectivePlacement {
    const desc = t.toDesc();
    const rank = this.rankInfo.rank;
    for (const s of desc.shards) {
      if (s.sip !== rank) {
        throw placementError(name, `rank ${rank}'s tensor must live on SIP ${rank} (call torch.ahbm.setDevice(rank) before allocating), got a shard on SIP ${s.sip}`);
      }
    }
    const me = this.memberRank(name, group);
    group.checkChannelSet(name, this.ccl.channel_sets);
    return placeCollective(this.host.env.machine, name, desc.shards, group, me, arrangement);
  }

  private launchPlaced<A extends unknown[]>(name: string, kernel: Kernel<A>, place: CollectivePlacement, args: unknown[], sends?: readonly number[]): LaunchHandle {
    return this.host.launch(name, kernel, args, { pes: place.pes, world: place.worlds, ranks: place.ranks, tag: this.collectives++, collective: true, sends });
  }

  /** The launch's Work, once its kernels have ended (asyncOp: at once). A reaction, not an async frame held while a collective runs. */
  private run(handle: LaunchHandle, opts: { asyncOp?: boolean }): Promise<Work> {
    const work = new Work(handle);
    if (opts.asyncOp) return Promise.resolve(work);
    return work.wait().then(() => work);
  }

  private memberRank(name: string, group: ProcessGroup): number {
    const me = group.groupRank(this.rankInfo.rank);
    if (me < 0) throw new KernbenchError('ERR_NOT_GROUP_MEMBER', `${name}: rank ${this.rankInfo.rank} is not a member of ${group}; only members run its collectives, got a call from rank ${this.rankInfo.rank}`);
    return me;
  }

  private requireWorld(): { backend: string; group: ProcessGroup } {
    if (!this.world) throw new KernbenchError('ERR_NOT_INITIALIZED', `the default process group is not initialised; call torch.distributed.initProcessGroup({backend: "ahbm"}) first, got a call from rank ${this.rankInfo.rank} with no process group`);
    return this.world;
  }
}

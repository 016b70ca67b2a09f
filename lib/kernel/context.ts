// Runs on: executor threads. Owns: `tl`, the Triton-shaped kernel language a
// kernel sees on one PE: identity, loads and stores, elementwise math, IPCQ
// send/recv and tl.parallel. Every op advances this flow's virtual clock by its
// modelled cost; local ops need no synchronisation (DESIGN §4).
//
// `tl` is a face: it checks arguments, charges costs and keeps the flow's
// one-operation-in-flight rule (./flow.ts), and hands the work to engines it
// builds once, for the plan's modes, and owns (decision 0036):
//   ./tile-ops.ts     the math half of tl (this class extends it), over
//   ./values.ts       what tiles hold: values, or nothing in timing-only mode
//   ./memory-port.ts  the PE's request slot at its cube's memory arbiter
//   ./transfers.ts    the transfers this flow issued, and its link horizon
//   ./race-hooks.ts   what the --check-races record is told
//   ./flow.ts         the flow's clock and actor, one operation in flight
//   ./branches.ts     tl.parallel: running the branches, their direction claims
// The DMA channels (lib/ipcq/) are the PE's, passed in (KernelPe); the handles
// a send or receive gives are ./handles.ts. No engine imports this file.
import { bytesPerElement, type DType } from '../dtype/index.js';
import { KernbenchError, formatPs, type ErrorCode } from '../errors.js';
import type { ChannelOp, InboundChannel, OutboundChannel } from '../ipcq/channel.js';
import { Peer, portOf, type Ports } from './ports.js';
import { Flow, Region } from './flow.js';
import { claimDirection, runBranches } from './branches.js';
import { DIRECTIONS, MAX_BRANCHES, peerRing, type Direction } from '../shm/layout.js';
import type { PeCoord } from '../topology/machine.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import type { VirtualClock } from '../time/virtual-clock.js';
import type { ShardDesc, TensorDesc } from '../shm/tensor-desc.js';
import type { KernelRun } from '../tile/slab.js';
import { allocate } from '../shm/allocator.js';
import { shapeSize, toShape, type Tile } from '../tile/tile.js';
import { RecvFuture, SendHandle, type SendWaiter } from './handles.js';
import { MemoryPort } from './memory-port.js';
import { raceHooksFor, type RaceHooks } from './race-hooks.js';
import { transfersFor, type Transfers } from './transfers.js';
import { TileOps } from './tile-ops.js';

export { RecvFuture, SendHandle } from './handles.js';

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

export class KernelContext extends TileOps implements SendWaiter {
  /** This context's flow of control: the kernel's main flow, or one branch of a tl.parallel. */
  /** @internal (tl.parallel's engine reads a branch's) */
  readonly flow: Flow;
  /** The transfers this flow issued, with the link horizon when links are shared. */
  private readonly transfers: Transfers;
  /** The PE's request slot at its cube's memory arbiter. */
  private readonly port: MemoryPort;
  /** The --check-races record's hooks (no-ops without the check). */
  private readonly race: RaceHooks;
  /** The pieces of the receive last issued (--check-races only). */
  private raceKeys: string[] | null = null;
  /** @internal Bytes of TCM scratch this kernel holds (released by the runtime at kernel end). */
  scratchBytes = 0;
  /** @internal What reportWaitPs summed (the runtime writes it into the kernel's record at its end). */
  reportedWaitPs = 0;

  constructor(
    private readonly pe: KernelPe,
    /** Kernel name (for errors and traces). */
    readonly name: string,
    /** Where each direction's sends go and receives come from (lib/kernel/ports.ts). */
    private readonly ports: Ports,
    /** This PE's CCL rank in `world` (programId for plain launches). */
    readonly rank: number,
    /** This kernel run's identity: the tile memory it makes is its own (lib/tile/slab.ts). */
    run?: KernelRun,
    flow?: Flow,
  ) {
    super(pe.env.costs, pe.env.plan.noData, run);
    const { env } = pe;
    this.flow = flow ?? new Flow(pe.clock, env.shared.layout.peActor(pe.id), null, -1);
    this.transfers = transfersFor(env.plan.links !== 'none', this.flow.clock, env.sched, this.flow.actor, (channel) => pe.chanDoneWord(channel));
    this.port = new MemoryPort(env, pe.id);
    this.race = raceHooksFor(env, pe.id);
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
    if (axis !== 0) throw new KernbenchError('ERR_INVALID_ARG_VALUE', `programId takes axis 0 (launches are 1-D), got ${axis}`);
    return this.rank;
  }
  numPrograms(): number {
    return this.ports.size;
  }
  get worldSize(): number {
    return this.ports.size;
  }
  /**
   * Report `ps` of this kernel's time as spent waiting on communication (a
   * kernel measures it with nowPs around its receives); calls add up, and the
   * host reads the total as the launch's PeTiming.waitPs. It changes no time.
   * Only the kernel's main flow reports (not a tl.parallel branch).
   */
  reportWaitPs(ps: number): void {
    if (!Number.isSafeInteger(ps) || ps < 0) throw new KernbenchError('ERR_BAD_WAIT_REPORT', `reportWaitPs takes a non-negative integer of ps, got ${ps}`);
    this.reportedWaitPs += ps;
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
    const granted = (): T => {
      this.clock.advanceTo(this.port.donePs());
      env.trace?.span(this.pe.id, `${space} access`, requestedPs, this.clock.nowPs);
      return this.settledAs(value);
    };
    if (wait === null) return Promise.resolve(granted());
    return wait.then(granted, (e: unknown) => this.failedWith(e));
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

  // ---- IPCQ -----------------------------------------------------------------

  /**
   * Send `tile` to the neighbour in `dir`, or to a peer of the world by rank
   * (`tl.peer(r)`, on its own ring: docs/decisions/0060-peer-channels.md). Runs
   * in the background; await the handle to wait for it.
   */
  send(to: Direction | Peer, tile: Tile): SendHandle {
    this.enter('send');
    const { d, set, pe: peer } = to instanceof Peer ? this.peerRing(to, 'send') : this.directionPort(to);
    this.claim('send', d);
    this.race.send(d, set, tile.dtype, tile.size);
    const channel = this.pe.out[d];
    const r = channel.send(set, peer, tile.dtype, tile.data, this.clock.nowPs, this.transfers.horizonPs, this.run);
    // Either way the flow's end waits for it (drain).
    if (typeof r === 'number') {
      this.transfers.sentAtOnce(r, channel.lastArrivalPs);
      return new SendHandle(this, null, r, channel.lastArrivalPs);
    }
    this.transfers.track(r);
    return new SendHandle(this, r, 0);
  }

  /**
   * Receive a tile of `shape` from the neighbour in `dir`. With `out` (a tile of
   * that size and dtype, e.g. a view of a chunk), the values land in it and it is
   * what the receive gives; otherwise a new tile. Same virtual time either way.
   */
  recv(dir: Direction | Peer, shape: number | readonly number[], dtype: DType, out?: Tile): Promise<Tile> {
    const tile = this.recvTile(shape, dtype, out);
    const r = this.recvIssue(dir, dtype, tile);
    // Done at once (the common case): what wait() does, without a RecvFuture.
    if (typeof r === 'number') {
      this.clock.advanceTo(r);
      this.settledNow('recv');
      this.race.received(this.raceKeys);
      return Promise.resolve(tile);
    }
    const f = new RecvFuture(r, 0, tile);
    f.raceKeys = this.raceKeys;
    return this.wait(f);
  }

  /** Start a receive; `await tl.wait(future)` gives the tile. Leave `out` alone until then. */
  recvAsync(dir: Direction | Peer, shape: number | readonly number[], dtype: DType, out?: Tile): RecvFuture {
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
    return this.values.newTile(dtype, sh, shapeSize(sh));
  }

  /** Issue a receive into `tile`: its completion time if done at once, else the queued op. */
  private recvIssue(from: Direction | Peer, dtype: DType, tile: Tile): ChannelOp<number> | number {
    this.enter('recv');
    let d: number, src: { pe: number; dir: number }, set: number;
    if (from instanceof Peer) {
      const ring = this.peerRing(from, 'recv');
      d = ring.d;
      set = ring.set;
      src = { pe: ring.pe, dir: ring.d };
    } else {
      d = this.dir(from);
      set = this.ports.set;
      src = portOf(this.ports.recv, d);
    }
    this.claim('recv', d);
    this.raceKeys = this.race.receive(src.pe, src.dir, set, dtype, tile.size);
    const r = this.pe.in[d].recv(src.pe, src.dir, set, dtype, tile.data, this.clock.nowPs);
    // Either way the flow's end waits for it (drain), even if never waited on.
    if (typeof r === 'number') this.transfers.receivedAtOnce(r);
    else this.transfers.track(r);
    return r;
  }

  /** Wait for a receive started with recvAsync. */
  wait(f: RecvFuture): Promise<Tile> {
    // Done at once or settled already (the common case): no async frame, one resolved promise.
    if (f.op === null) {
      this.clock.advanceTo(f.donePs);
      this.settledNow('wait');
      this.race.received(f.raceKeys);
      return Promise.resolve(f.tile);
    }
    if (f.op.settled) {
      this.transfers.take(f.op);
      this.settledNow('wait');
      this.race.received(f.raceKeys);
      return Promise.resolve(f.tile);
    }
    // Not in yet: wait as Transfers.settle does, with one promise instead of an async frame
    // (a ring step under --threads 2 lands here whenever its thread got ahead of the other).
    this.flow.begin('wait');
    const op = f.op;
    const sched = this.pe.env.sched;
    const actor = this.flow.actor;
    this.transfers.block(op);
    return op.promise.then(
      () => {
        sched.unblock(actor);
        this.transfers.take(op);
        this.transfers.untrack(op);
        this.race.received(f.raceKeys);
        return this.settledAs(f.tile);
      },
      (e: unknown) => {
        sched.unblock(actor);
        return this.failedWith(e);
      },
    );
  }

  /** @internal Account for a send that has already completed (SendHandle fast path). */
  waitSendNow(h: SendHandle): void {
    if (h.op === null) {
      this.clock.advanceTo(h.donePs);
      this.transfers.sendWaited(h.arrivalPs);
    } else {
      this.transfers.take(h.op);
      this.transfers.sendWaited(h.op.arrivalPs);
    }
  }

  /** @internal Wait for a send (what awaiting a SendHandle does). */
  waitSend(h: SendHandle): Promise<void> {
    if (h.op === null || h.op.settled) {
      this.waitSendNow(h);
      this.settledNow('await send');
      return Promise.resolve();
    }
    this.flow.begin('await send');
    const op = h.op;
    return this.transfers.settle(op).then(
      () => {
        this.transfers.sendWaited(op.arrivalPs);
        return this.settledAs(undefined);
      },
      (e: unknown) => this.failedWith(e),
    );
  }

  /** @internal Wait for every transfer this flow started (the runtime does this when the kernel returns; tl.parallel when a branch does). */
  drain(): Promise<void> {
    return this.transfers.drain();
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
      throw this.error('ERR_INVALID_ARG_TYPE', `tl.parallel takes an array of 1 to ${MAX_BRANCHES} functions (tl) => Promise, got ${Array.isArray(branches) ? `${branches.length} item(s)` : typeof branches}`);
    }
    const L = this.pe.env.shared.layout;
    const start = this.clock.nowPs;
    const region = new Region(start);
    const kids = branches.map((_, i) => new KernelContext(this.pe, this.name, this.ports, this.rank, this.run, Flow.branch(start, L.branchActor(this.pe.id, i), region, i)));
    // A branch's pieces, like this flow's, enter their links after the sends it waited for arrived.
    for (const k of kids) k.transfers.inherit(this.transfers);
    return runBranches(this.pe.env.sched, this.flow, kids, branches);
  }

  // ---- helpers ----------------------------------------------------------------

  /**
   * Rank `rank` of this kernel's world, to send to or receive from directly:
   * `tl.send(tl.peer(r), tile)`, `tl.recv(tl.peer(r), n, dtype)`. Needs a run with
   * ccl.peer_ranks >= the world's size (docs/decisions/0060-peer-channels.md).
   */
  peer(rank: number): Peer {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.ports.size || rank === this.rank) {
      throw new KernbenchError('ERR_INVALID_PEER', `${this.name} on PE ${this.pe.id}: a peer is another rank of the world, an integer in [0, ${this.ports.size}) other than this kernel's ${this.rank}, got ${String(rank)}`);
    }
    return new Peer(rank);
  }

  /** Where a send in direction `dir` goes: the DMA channel, its channel set and the receiving PE. */
  private directionPort(dir: Direction): { d: number; set: number; pe: number } {
    const d = this.dir(dir);
    return { d, set: this.ports.set, pe: portOf(this.ports.send, d).pe };
  }

  /**
   * The peer ring between this rank and `p` (decision 0060): for a send, this PE's
   * ring at distance (p - r) mod n and p's PE; for a receive, p's ring at distance
   * (r - p) mod n and p's PE. `d` is the direction (DMA channel) of that ring.
   */
  private peerRing(p: Peer, use: 'send' | 'recv'): { d: number; set: number; pe: number } {
    const n = this.ports.size;
    const ccl = this.pe.env.plan.ccl;
    const pes = this.ports.pes;
    if (pes === undefined || (ccl.peer_ranks ?? 0) < n) {
      throw new KernbenchError('ERR_NO_PEER_CHANNELS', `${this.name} on PE ${this.pe.id}: ${use} to ${p} needs peer channels for a world of ${n} ranks; run with ccl.peer_ranks >= ${n} (--set ccl.peer_ranks=${n}), got ccl.peer_ranks = ${ccl.peer_ranks ?? 0}`);
    }
    const k = use === 'send' ? (p.rank - this.rank + n) % n : (this.rank - p.rank + n) % n;
    const ring = peerRing(ccl.channel_sets, ccl.peer_ranks ?? 0, this.ports.set, k);
    return { d: ring.dir, set: ring.set, pe: pes[p.rank] };
  }

  private dir(d: Direction): number {
    const i = DIRECTIONS.indexOf(d);
    if (i < 0) throw this.error('ERR_INVALID_ARG_VALUE', `direction must be one of ${DIRECTIONS.join('|')}, got '${String(d)}'`);
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

  /** @internal A promise-returning operation that settled as it was issued: in flight until its awaiter resumes. */
  settledNow(op: string): void {
    this.flow.begin(op);
    this.flow.end();
  }

  /** In a tl.parallel branch, `use` of direction `d` must be this branch's alone. */
  private claim(use: 'send' | 'recv', d: number): void {
    if (this.flow.region === null) return;
    const clash = claimDirection(this.flow, use, DIRECTIONS[d]);
    if (clash !== null) throw this.error('ERR_KERNEL_CONCURRENCY', clash);
  }

  /** @internal Advance this flow's clock by a local op's cost. */
  advance(ps: number, op = 'compute'): void {
    this.enter(op);
    const trace = this.pe.env.trace;
    if (trace && ps > 0) trace.span(this.pe.id, op, this.clock.nowPs, this.clock.nowPs + ps);
    this.clock.advance(ps);
  }

  error(code: ErrorCode, message: string): KernbenchError {
    return new KernbenchError(code, `${this.name} on ${this.pe.env.machine.describePe(this.pe.id)} at ${formatPs(this.clock.nowPs)}: ${message}`, {
      pe: this.pe.coord,
      kernel: this.name,
      atPs: this.clock.nowPs,
    });
  }
}

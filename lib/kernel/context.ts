// Runs on: executor threads. Owns: `tl`, the Triton-shaped kernel language a
// kernel sees on one PE: identity, loads and stores, elementwise math, IPCQ
// send/recv and tl.parallel. Every op advances this flow's virtual clock by its
// modelled cost; local ops need no synchronisation (DESIGN §4).
//
// `tl` is a face: it checks arguments, charges costs and keeps the flow's
// one-operation-in-flight rule (./flow.ts), and hands the work to engines it
// builds once, for the plan's modes, and owns (decision 0036):
//   ./memory-ops.ts   the memory half of tl (this class extends it): shards,
//                     loads, stores, scratch, over
//   ./memory-port.ts  the PE's request slot at its cube's memory arbiter
//   ./tile-ops.ts     the math half of tl (memory-ops extends it), over
//   ./values.ts       what tiles hold: values, or nothing in timing-only mode
//   ./transfers.ts    the transfers this flow issued, and its link horizon
//   ./race-hooks.ts   what the --check-races record is told
//   ./flow.ts         the flow's clock and actor, one operation in flight
//   ./branches.ts     tl.parallel: running the branches, their direction claims
// The DMA channels (lib/ipcq/) are the PE's, passed in (KernelPe); the handles
// a send or receive gives are ./handles.ts. No engine imports this file.
import type { DType } from '../dtype/index.js';
import { KernbenchError, formatPs, type ErrorCode } from '../errors.js';
import type { ChannelOp } from '../ipcq/channel.js';
import { resolvedUntagged } from '../sync/fault-owner.js';
import { TURNS_BEFORE_PARK } from '../sync/scheduler.js';
import { publishClock } from '../sync/pe-floor.js';
import { Peer, peerRoute, RouteCache, routeThrough, type Ports, type Route } from './ports.js';
import { Flow, Region } from './flow.js';
import { claimDirection, runBranches } from './branches.js';
import { DIRECTIONS, MAX_BRANCHES, type Direction } from '../shm/layout.js';
import type { PeCoord } from '../topology/machine.js';
import type { KernelRun } from '../tile/slab.js';
import { shapeSize, toShape, type Tile } from '../tile/tile.js';
import { ZERO_PS } from '../time/virtual-time.js';
import { RecvFuture, SendHandle, type SendWaiter } from './handles.js';
import { MemoryOps, type KernelPe } from './memory-ops.js';
import { transfersFor, type Transfers } from './transfers.js';

export { RecvFuture, SendHandle } from './handles.js';
export type { KernelPe } from './memory-ops.js';

/** What awaiting a send settled at once gives: one fulfilled promise for every such wait on this thread (decision 0165). */
export const RESOLVED_VOID: Promise<void> = resolvedUntagged(undefined);

export class KernelContext extends MemoryOps implements SendWaiter {
  /** The transfers this flow issued, with the link horizon when links are shared. */
  private readonly transfers: Transfers;
  /** The pieces of the receive last issued (--check-races only). */
  private raceKeys: string[] | null = null;
  /** @internal What reportWaitPs summed (the runtime writes it into the kernel's record at its end). */
  reportedWaitPs = ZERO_PS;

  constructor(
    pe: KernelPe,
    /** Kernel name (for errors and traces). */
    readonly name: string,
    /** Where each direction's sends go and receives come from (lib/kernel/ports.ts). */
    private readonly ports: Ports,
    /** This PE's CCL rank in `world` (programId for plain launches). */
    readonly rank: number,
    /** This kernel run's identity: the tile memory it makes is its own (lib/tile/slab.ts). */
    run?: KernelRun,
    flow?: Flow,
    /** Shared with its tl.parallel branches: ended once the kernel returned and drained, or failed. */
    private readonly kernelLife = { ended: false },
  ) {
    super(pe, run, flow);
    const { env } = pe;
    this.transfers = transfersFor(env.plan.links !== 'none', this.flow.clock, env.sched, this.flow.actor, (channel) => pe.chanDoneWord(channel));
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

  // ---- IPCQ -----------------------------------------------------------------

  /**
   * Send `tile` to the neighbour in `dir`, or to a peer of the world by rank
   * (`tl.peer(r)`, on its own ring: docs/decisions/0060-peer-channels.md). Runs
   * in the background; await the handle to wait for it.
   */
  send(to: Direction | Peer, tile: Tile): SendHandle {
    const r = this.sendIssue(to, tile);
    return typeof r === 'number' ? new SendHandle(this, null, r, this.sentArrivalPs) : new SendHandle(this, r, 0);
  }

  /** @internal A ring step's send (lib/ccl/steps.ts): null when done at once, its wait held until waitHeldSends(); else send's handle. */
  sendHeld(to: Direction | Peer, tile: Tile): SendHandle | null {
    const r = this.sendIssue(to, tile);
    if (typeof r !== 'number') return new SendHandle(this, r, 0);
    this.transfers.sentHeld(r, this.sentArrivalPs);
    return null;
  }

  /** @internal Wait for the sends `sendHeld` kept, as awaiting each one's handle would (they completed as issued). */
  waitHeldSends(): void {
    this.transfers.waitHeld();
  }

  /** Issue a send of `tile`: its completion time if done at once (its arrival then in `sentArrivalPs`), else the queued op. */
  private sendIssue(to: Direction | Peer, tile: Tile): ChannelOp<number> | number {
    this.enter('send');
    const { d, set, pe: peer } = this.route(to, 'send');
    this.claim('send', d);
    this.race.send(d, set, tile.dtype, tile.size);
    const channel = this.pe.channels.outbound(d);
    // Shared links proved alone: the flow's clock as it sends, a fresher lower bound for others' launch horizons (lib/sync/end-bounds.ts).
    const env = this.pe.env;
    if (env.linksClaimed) publishClock(env.shared, this.flow.actor, this.clock.nowPs);
    const r = channel.send(set, peer, tile.dtype, tile.data, this.clock.nowPs, this.transfers.horizonPs, this.run);
    // Either way the flow's end waits for it (drain).
    if (typeof r === 'number') {
      this.sentArrivalPs = channel.lastArrivalPs;
      this.transfers.sentAtOnce(r, this.sentArrivalPs);
    } else this.transfers.track(r);
    return r;
  }

  /**
   * Receive a tile of `shape` from the neighbour in `dir`. With `out` (a tile of
   * that size and dtype, e.g. a view of a chunk), the values land in it and it is
   * what the receive gives; otherwise a new tile. Same virtual time either way.
   */
  recv(dir: Direction | Peer, shape: number | readonly number[], dtype: DType, out?: Tile): Promise<Tile> {
    const tile = this.recvTile(shape, dtype, out);
    return (this.pe.env.sched.turnsFirst ? this.recvAfter(dir, dtype, tile, TURNS_BEFORE_PARK, false) : this.recvInto(dir, dtype, tile, false)) as Promise<Tile>;
  }

  /** @internal A ring step's receive into `out` (lib/ccl/steps.ts): in flight until the step calls resumed() (decision 0175). */
  recvHeld(from: Direction | Peer, out: Tile): Promise<unknown> {
    return this.pe.env.sched.turnsFirst ? this.recvAfter(from, out.dtype, out, TURNS_BEFORE_PARK, true) : this.recvInto(from, out.dtype, out, true);
  }

  /** @internal The step that awaited `recvHeld` has resumed: its receive is no longer in flight. */
  resumed(): void {
    this.flow.resumed();
  }

  /**
   * Receive into `tile`; but while the receive would park for another thread's sender, first
   * give this thread's other PEs a turn (at most `turns` more): the kernel stays RUNNING, and
   * one stall at a thread's boundary no longer parks every rank behind it in turn (decision 0155).
   */
  private recvAfter(from: Direction | Peer, dtype: DType, tile: Tile, turns: number, held: boolean): Promise<unknown> {
    if (turns > 0) {
      const { d, set, pe, dir } = this.route(from, 'recv');
      const parks = this.pe.env.plan.peExecutor[pe] !== this.pe.env.sched.executor && this.pe.channels.inbound(d).wouldPark(pe, dir, set, dtype, tile.size);
      if (parks) return this.recvAfterTurn(from, dtype, tile, turns - 1, held);
    }
    return this.recvInto(from, dtype, tile, held);
  }

  /** recvAfter a turn later; its closure in a method of its own, as OutboundChannel.sendQueued's. */
  private recvAfterTurn(from: Direction | Peer, dtype: DType, tile: Tile, turns: number, held: boolean): Promise<unknown> {
    return resolvedUntagged(undefined).then(() => this.recvAfter(from, dtype, tile, turns, held));
  }

  /** Receive into `tile`: a promise of it (not held), or one that only says when (held: recvHeld). */
  private recvInto(dir: Direction | Peer, dtype: DType, tile: Tile, held: boolean): Promise<unknown> {
    const r = this.recvIssue(dir, dtype, tile);
    // Done at once (the common case): what wait() does, without a RecvFuture.
    if (typeof r === 'number') {
      this.clock.advanceTo(r);
      return this.receivedNow('recv', tile, this.raceKeys, held);
    }
    const f = new RecvFuture(r, 0, tile);
    f.raceKeys = this.raceKeys;
    return this.waitFor(f, held);
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
    const { d, set, pe, dir } = this.route(from, 'recv');
    this.claim('recv', d);
    this.raceKeys = this.race.receive(pe, dir, set, dtype, tile.size);
    const r = this.pe.channels.inbound(d).recv(pe, dir, set, dtype, tile.data, this.clock.nowPs);
    // Either way the flow's end waits for it (drain), even if never waited on.
    if (typeof r === 'number') this.transfers.receivedAtOnce(r);
    else this.transfers.track(r);
    return r;
  }

  /** Wait for a receive started with recvAsync. */
  wait(f: RecvFuture): Promise<Tile> {
    return this.waitFor(f, false) as Promise<Tile>;
  }

  /** Wait for `f`: a promise of its tile, or for a held receive (recvHeld) one that only says when. */
  private waitFor(f: RecvFuture, held: boolean): Promise<unknown> {
    // Done at once or settled already (the common case): no async frame, one resolved promise.
    if (f.op === null || f.op.settled) {
      if (f.op === null) this.clock.advanceTo(f.donePs);
      else this.transfers.take(f.op);
      return this.receivedNow('wait', f.tile, f.raceKeys, held);
    }
    return this.parked(f, held);
  }

  /** A receive settled into the clock as `op` returned: in flight until its awaiter resumes (held: until it calls resumed()). */
  private receivedNow(op: string, tile: Tile, raceKeys: string[] | null, held: boolean): Promise<unknown> {
    this.race.received(raceKeys);
    this.flow.begin(op);
    if (held) return RESOLVED_VOID;
    this.flow.end();
    return this.resolvedWith(tile);
  }

  /** A receive not in yet: wait as Transfers.settle does, with one promise, not an async frame (held: in flight once settled). */
  private parked(f: RecvFuture, held: boolean): Promise<Tile> {
    const op = f.op as ChannelOp<number>;
    this.flow.begin('wait');
    const sched = this.pe.env.sched;
    const actor = this.flow.actor;
    this.transfers.block(op);
    return op.promise.then(
      () => {
        sched.unblock(actor);
        this.transfers.take(op);
        this.transfers.untrack(op);
        this.race.received(f.raceKeys);
        return held ? f.tile : this.settledAs(f.tile);
      },
      (e: unknown) => {
        sched.unblock(actor);
        return this.failedWith(e);
      },
    );
  }

  /** The last byte's arrival of the send issued last when it completed at once. */
  private sentArrivalPs = ZERO_PS;

  /** The tile a receive settled at once gave last, and the fulfilled promise of it. */
  private lastTile: Tile | undefined;
  private lastResolved: Promise<Tile> | undefined;

  /**
   * A fulfilled promise of `tile` for a receive settled at once: the one made for the
   * last such receive when it gave the same tile (a ring step's reduce-scatter
   * receives into one scratch tile every step). A fulfilled promise never changes, and
   * awaiting it queues the awaiter now whichever promise it is: the same order, one
   * promise fewer (decision 0165).
   */
  private resolvedWith(tile: Tile): Promise<Tile> {
    if (tile !== this.lastTile || this.lastResolved === undefined) {
      this.lastTile = tile;
      this.lastResolved = resolvedUntagged(tile);
    }
    return this.lastResolved;
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
      return RESOLVED_VOID;
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

  /** This flow returned and drained, or failed (a branch's end; the kernel's ends kernelLife too). */
  private ended = false;

  /** @internal The kernel or branch returned or failed: any later operation is refused (ERR_KERNEL_ENDED); then what it issued is drained. */
  async end(failed: boolean): Promise<void> {
    this.ended = true;
    if (this.flow.region === null) this.kernelLife.ended = true;
    if (!failed) await this.transfers.drain();
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
    const kids = branches.map((_, i) => new KernelContext(this.pe, this.name, this.ports, this.rank, this.run, Flow.branch(start, L.branchActor(this.pe.id, i), region, i, this.pe.env.plan.maxVirtualTimePs), this.kernelLife));
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

  /** The route of the operation being issued, and the last through a direction for each use (lib/kernel/ports.ts). */
  private readonly routed = new RouteCache();

  /** Where a send to `to` goes, or a receive from it reads. A direction (a string) skips instanceof, a lookup of Peer's Symbol.hasInstance in optimised code (decision 0264). */
  private route(to: Direction | Peer, use: 'send' | 'recv'): Readonly<Route> {
    if (typeof to !== 'string' && to instanceof Peer) return peerRoute(this.routed, this.ports, this.rank, to, use, this.pe.env.plan.ccl, this.name, this.pe.id);
    return this.routed.recall(to, use) ?? this.routed.remember(to, use, routeThrough(this.routed, this.ports, this.dir(to), use));
  }

  private dir(d: Direction): number {
    const i = DIRECTIONS.indexOf(d);
    if (i < 0) throw this.error('ERR_UNKNOWN_DIRECTION', `direction must be one of ${DIRECTIONS.join('|')}, got '${String(d)}'`);
    return i;
  }

  /** The operation in flight settled with `value`. */
  protected settledAs<T>(value: T): T {
    this.flow.end();
    return value;
  }

  /** The operation in flight failed. */
  protected failedWith(e: unknown): never {
    this.flow.end();
    throw e;
  }

  /** Refuse `op` while another tl operation of this flow is in flight (lib/kernel/flow.ts). */
  protected enter(op: string): void {
    if (this.ended || this.kernelLife.ended) throw this.error('ERR_KERNEL_ENDED', `${op} after ${this.kernelLife.ended ? 'the kernel' : 'its tl.parallel branch'} ended: a flow of tl operations outlived it (an async function called without await, or a promise of tl not awaited); it would run with no actor of the PE to account for it, on reused tiles. Await every flow before the kernel or branch returns, got '${op}' after the end`);
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

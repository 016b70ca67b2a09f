// Runs on: executor threads (inside collective kernels). Owns: the building
// blocks the collective kernels share — the ring reduce-scatter and all-gather
// steps over any pair of directions, and the line all-reduce of a dimension
// without wrap-around. Each works in place on a tile the kernel loaded once; the
// kernel stores it once at the end. The chunks of a segment and the reused
// receive buffers are ./chunks.ts's.
import { RESOLVED_VOID, type KernelContext, type SendHandle } from '../kernel/context.js';
import { stepQueue } from '../sync/step-queue.js';
import type { Tile } from '../tile/tile.js';
import type { Direction } from '../shm/layout.js';
import type { ReduceOp } from './reduce-op.js';
import { OwnedContinuation } from '../sync/fault-owner.js';
import { Chunks, ScratchTiles } from './chunks.js';

/** The elementwise reduction behind an op: avg sums, then scales once. */
export type Reduction = Exclude<ReduceOp, 'avg'>;

export function reductionOf(op: ReduceOp): Reduction {
  return op === 'avg' ? 'sum' : op;
}

export const mod = (a: number, p: number): number => ((a % p) + p) % p;

const NOOP = (): void => {};

export { Chunks, ScratchTiles };

/**
 * The two sets of scratch tiles a ring pass receives into in turn: one pair a `tl`
 * (and dtype), shared by the passes it runs one after another (an all-reduce's
 * reduce-scatter and all-gather, a 2-D algorithm's four passes). A pass ends with
 * every send waited for and every receive landed, so the next finds them free. A
 * pair a pass held four chunks between an all-reduce's two passes: a rank's whole
 * shard at p = 4 (test/data-memory.test.ts). With them, one set of staging tiles for
 * the reduce-scatter's sum: the local chunk is copied there, beside the scratch on its
 * slab, so that the slab's SIMD add does the sum (tl.reduceAt; decision 0216).
 */
interface Scratch {
  readonly sets: [ScratchTiles, ScratchTiles];
  readonly staging: ScratchTiles;
}
const scratchOf = new WeakMap<KernelContext, Scratch>();

function scratchFor(tl: KernelContext, dtype: Tile['dtype']): Scratch {
  let s = scratchOf.get(tl);
  if (s === undefined || s.staging.dtype !== dtype) {
    s = { sets: [new ScratchTiles(tl, dtype), new ScratchTiles(tl, dtype)], staging: new ScratchTiles(tl, dtype) };
    scratchOf.set(tl, s);
  }
  return s;
}

/** One ring of p ranks: this rank's position, and the directions to its successor and from its predecessor. */
export interface RingLinks {
  p: number;
  pos: number;
  send: Direction;
  recv: Direction;
}

/**
 * What to await for a send: the handle itself, or, when the send completed as
 * it was issued, nothing (its completion time is applied now, exactly as
 * awaiting the handle would). Awaiting the handle, a thenable, is three
 * microtask turns plus ~400 bytes of promise machinery (measured: ~8 % of a
 * 64-rank all-reduce on one thread). The steps do not await the undefined
 * either: each step yields at its receive already, which keeps the ranks of a
 * thread in step, and a second await was a promise per step (tagged by the
 * fault-owner hooks when several ranks share the thread; docs/benchmarks.md,
 * "Peak memory").
 */
export function sendDone(tl: KernelContext, sent: SendHandle): SendHandle | undefined {
  if (sent.op !== null) return sent;
  tl.waitSendNow(sent);
  return undefined;
}

/**
 * The p - 1 steps of one pass around a ring (a reduce-scatter or an
 * all-gather): in step s send `outgoing(s)`, receive into `incoming(s)`, then
 * `landed(s, incoming)`, then wait for the send. What awaiting in a loop would
 * do, turn for turn:
 *
 *   step s:  sendHeld(outgoing)  recvHeld(into incoming)  -- yield --
 *            resumed()  landed()  waitHeldSends() | yield until the send is done
 *            step s + 1, or settle the pass's promise after step p - 2
 *
 * A step yields once, at its receive, which keeps the ranks of a thread in step.
 * Its receive and send are `tl`'s held forms (decision 0175): a receive settled
 * at once costs no promise of its own and no release job, a send completed as
 * issued no handle; the times are those of `tl.recv` and an awaited `tl.send`.
 * The yield is a reaction on the receive's promise that resumes the kernel's
 * fault owner (OwnedContinuation), not an `await`: with several owners on the
 * thread an `await` also made an async frame's closures and a promise tagged by
 * the fault-owner hooks, a step (decision 0195). The reaction is queued when
 * the `await` would have queued the frame's, so ranks resume in the same order;
 * or, on a thread where that order costs proofs of links or waves of parks, the
 * step then waits in the thread's step queue for its turn by virtual time
 * (lib/sync/step-queue.ts, decision 0261). A failure (a throw of tl, a failed
 * receive or send) rejects the pass's promise, as it would an async function's.
 */
abstract class RingPass<T> {
  /** The step running now, 0 to p - 2; p - 1 once the pass is over. */
  private s = 0;
  /** Step s's send when it did not complete as issued (null: held by tl, waitHeldSends). */
  private sent: SendHandle | null = null;
  /** Step s's tile to receive into. */
  private into: Tile | undefined;
  /** What the pass waits for now: step s's receive (then land), or its send (then step s + 1). */
  private waitingSend = false;
  /**
   * The one reaction the pass waits with: a receive and a send are never waited for at once.
   * One continuation a pass, not one a kind of wait: each is an object and four closures.
   */
  private readonly resume = new OwnedContinuation(
    () => this.resumed(),
    (e) => this.reject(e),
  );
  /** The thread's step queue's quantum (lib/sync/step-queue.ts), or 0: each step takes its turn in the order it yielded. */
  private readonly quantumPs: number;
  /** With a step queue: the reaction that, once a wait has settled, queues the pass for its turn. */
  private readonly enqueue: OwnedContinuation | null;
  /** With a step queue: when step s started, in its quanta. */
  private quantum = 0;
  private resolve: (v: T) => void = NOOP;
  private reject: (e: unknown) => void = NOOP;

  constructor(
    protected readonly tl: KernelContext,
    private readonly ring: RingLinks,
  ) {
    this.quantumPs = tl.stepQuantumPs;
    this.enqueue =
      this.quantumPs === 0
        ? null
        : new OwnedContinuation(
            () => this.queued(),
            (e) => this.reject(e),
          );
  }

  /** Wait in the thread's step queue, by when step s started and the PE, to go on. */
  private queued(): void {
    stepQueue.push(this.resume, this.quantum, this.tl.peId);
  }

  /** Step s's tile to send. */
  protected abstract outgoing(s: number): Tile;
  /** Step s's tile to receive into. */
  protected abstract incoming(s: number): Tile;
  /** Step s's receive has landed in `incoming`: reduce or keep it. */
  protected abstract landed(s: number, incoming: Tile): void;
  /** What the pass's promise gives once every step is done. */
  protected abstract result(): T;

  /** Run the steps: step 0 now, up to its receive; the promise settles after the last. */
  run(): Promise<T> {
    const done = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.step();
    return done;
  }

  /** Issue step s's send and receive, and yield until the receive has landed; or settle the pass after its last step. */
  private step(): void {
    try {
      if (this.s === this.ring.p - 1) {
        this.resolve(this.result());
        return;
      }
      if (this.quantumPs !== 0) this.quantum = this.tl.quantumNow(this.quantumPs);
      this.sent = this.tl.sendHeld(this.ring.send, this.outgoing(this.s));
      const into = this.incoming(this.s);
      this.into = into;
      const landed = this.tl.recvHeld(this.ring.recv, into);
      if (this.enqueue === null) this.resume.after(landed);
      else if (landed === RESOLVED_VOID) this.queued();
      else this.enqueue.after(landed);
    } catch (e) {
      this.reject(e);
    }
  }

  private resumed(): void {
    if (!this.waitingSend) return this.land();
    this.waitingSend = false;
    this.step();
  }

  /** Step s resumed with its receive landed: keep it, wait for the send, go on to step s + 1. */
  private land(): void {
    try {
      this.tl.resumed();
      this.landed(this.s, this.into as Tile);
      const sent = this.sent;
      this.s++;
      if (sent === null) {
        this.tl.waitHeldSends();
        this.step();
        return;
      }
      // As `await sent` would: the handle's then runs in a job of its own, and step s + 1 a turn after the wait settles.
      this.waitingSend = true;
      (this.enqueue ?? this.resume).after(Promise.resolve(sent));
    } catch (e) {
      this.reject(e);
    }
  }
}

/**
 * The chunk passes of a ring all-reduce over `seg` of `data`, this rank at ring
 * position pos: step s sends chunk (pos + shift + lead - s) and receives chunk
 * (pos + shift + lead - 1 - s) into one of two scratch tiles in turn, combines
 * it with the local copy (the reduce-scatter, `op`) or not (the all-gather, no
 * op), copies it into place and sends it on from the scratch the next step. An
 * all-reduce's reduce-scatter copies into place only the chunk it ends up
 * owning (decision 0282). A pass cuts one chunk view, its first send, not one a
 * step (a view is a Tile, a shape and a typed array; decisions 0176, 0195): a
 * view a step cost more than the copy it saves (decision 0282). The other
 * scratch's send was waited for at the end of the step before.
 *
 * One class for both passes: an all-reduce runs a reduce-scatter and then an
 * all-gather on every rank, and the pass's methods, optimised on the first, left
 * their code again on the second's objects when those had a class of their own
 * (decision 0263).
 */
class ChunkPass<T extends number | void> extends RingPass<T> {
  private readonly scratch: [ScratchTiles, ScratchTiles];
  /** Where the reduce-scatter's sum copies the local chunk (scratchFor). */
  private readonly staging: ScratchTiles;
  private readonly p: number;
  private readonly pos: number;
  /** What step s sends: chunk (pos + shift + lead), then the scratch step s - 1 received into. */
  private sending: Tile | undefined;

  constructor(
    tl: KernelContext,
    private readonly data: Tile,
    private readonly seg: Chunks,
    ring: RingLinks,
    /** The reduce-scatter's reduction; null for the all-gather, which keeps what it receives. */
    private readonly op: Reduction | null,
    private readonly shift: number,
    /** 0 for the reduce-scatter, 1 for the all-gather: the chunk a rank sends first is its position's plus this. */
    private readonly lead: 0 | 1,
    /**
     * Whether the reduce-scatter writes each partial sum back into `data` (a reduce-scatter
     * on its own), or only the chunk it ends up owning: an all-reduce's all-gather then
     * overwrites every other chunk with its full sum, so those copies were never read.
     */
    private readonly partials = true,
  ) {
    super(tl, ring);
    this.p = ring.p;
    this.pos = ring.pos;
    const scratch = scratchFor(tl, data.dtype);
    this.scratch = scratch.sets;
    this.staging = scratch.staging;
  }

  /** The chunk step s receives. */
  private chunk(s: number): number {
    return mod(this.pos + this.shift + this.lead - 1 - s, this.p);
  }

  protected outgoing(s: number): Tile {
    if (s === 0) this.sending = this.seg.of(this.data, mod(this.pos + this.shift + this.lead, this.p));
    return this.sending as Tile;
  }

  protected incoming(s: number): Tile {
    return this.scratch[s & 1].of(this.seg.count(this.chunk(s)));
  }

  protected landed(s: number, incoming: Tile): void {
    const lo = this.seg.lo(this.chunk(s));
    // The reduce-scatter adds the local chunk into the scratch it landed in (tl.reduceAt, no view of the chunk).
    const op = this.op;
    if (op !== null) this.tl.reduceAt(op, this.data, lo, incoming, op === 'sum' ? this.staging.of(incoming.size) : undefined);
    if (!this.data.blank && (op === null || this.partials || s === this.p - 2)) this.data.data.set(incoming.data, lo);
    this.sending = incoming;
  }

  /** The reduce-scatter's: the chunk this rank then owns fully reduced; the all-gather's: nothing. */
  protected result(): T {
    return (this.op === null ? undefined : mod(this.pos + 1 + this.shift, this.p)) as T;
  }
}

/**
 * Reduce-scatter `seg` of `data` around `ring`: p - 1 steps; in step s send
 * chunk (pos - s + shift), receive chunk (pos - s - 1 + shift) and reduce it
 * into the local copy (the local chunk is added into the scratch it landed in:
 * tl.reduceAt, no view of the chunk). Returns the chunk this rank then owns
 * fully reduced, (pos + 1 + shift) mod p. Each step issues the send, waits for
 * the receive, reduces, then waits for the send (RingPass).
 */
export function ringReduceScatter(tl: KernelContext, data: Tile, seg: Chunks, ring: RingLinks, op: Reduction, shift = 0): Promise<number> {
  return new ChunkPass<number>(tl, data, seg, ring, op, shift, 0).run();
}

/**
 * All-gather `seg` of `data` around `ring`, this rank owning chunk
 * (pos + 1 + shift): p - 1 steps; in step s send chunk (pos + 1 + shift - s),
 * receive chunk (pos + shift - s) and keep it. Steps as ringReduceScatter's.
 */
export function ringAllGather(tl: KernelContext, data: Tile, seg: Chunks, ring: RingLinks, shift = 0): Promise<void> {
  return new ChunkPass<void>(tl, data, seg, ring, null, shift, 1).run();
}

/** Multiply chunk i of `seg` by `factor` in place (one rounding to the dtype). */
export function scaleChunk(tl: KernelContext, data: Tile, seg: Chunks, i: number, factor: number): void {
  data.data.set(tl.scale(seg.of(data, i), factor).data, seg.lo(i));
}

/**
 * Ring all-reduce of `seg` (docs/algorithms/ring_allreduce.md): reduce-scatter,
 * then for avg the owner scales its chunk by 1/avgOver, then all-gather.
 */
export function ringAllReduce(tl: KernelContext, data: Tile, seg: Chunks, ring: RingLinks, op: ReduceOp, avgOver: number): Promise<void> {
  // A reaction, not an async frame kept through both passes; the kernel resumes on the same turn.
  const reduceScatter = new ChunkPass<number>(tl, data, seg, ring, reductionOf(op), 0, 0, false).run();
  return reduceScatter.then((own) => {
    if (op === 'avg') scaleChunk(tl, data, seg, own, 1 / avgOver);
    return ringAllGather(tl, data, seg, ring);
  });
}

/** One line (a dimension without wrap-around) of p ranks: this rank's position and the directions to pos + 1 and pos - 1. */
export interface LineLinks {
  p: number;
  pos: number;
  fwd: Direction;
  back: Direction;
}

/**
 * All-reduce of `seg` along a line (docs/algorithms/mesh_allreduce.md):
 *   p = 1  nothing to exchange (avg still scales).
 *   p = 2  the two ranks are each other's only neighbour: a 2-rank ring, over
 *          the one link in both directions.
 *   p > 2  reduce toward the last rank in p pieces (rank x receives piece i from
 *          x - 1, reduces its own into it, passes it to x + 1), then broadcast
 *          back in p pieces (the last rank scales each piece for avg first).
 * `scale` (1 / ranks for avg, else null) is applied once, by the owner.
 */
export async function lineAllReduce(tl: KernelContext, data: Tile, seg: Chunks, line: LineLinks, op: Reduction, scale: number | null): Promise<void> {
  const { p, pos } = line;
  if (p === 1) {
    if (scale !== null) scaleChunk(tl, data, seg, 0, scale);
    return;
  }
  if (p === 2) {
    const dir = pos === 0 ? line.fwd : line.back;
    const ring = { p, pos, send: dir, recv: dir };
    const own = await ringReduceScatter(tl, data, seg, ring, op);
    if (scale !== null) scaleChunk(tl, data, seg, own, scale);
    await ringAllGather(tl, data, seg, ring);
    return;
  }
  const last = pos === p - 1;
  const sends = [];
  for (let i = 0; i < p; i++) {
    if (pos > 0) {
      const incoming = await tl.recv(line.back, seg.count(i), data.dtype);
      data.data.set(tl.reduce(op, seg.of(data, i), incoming).data, seg.lo(i));
    }
    if (!last) sends.push(tl.send(line.fwd, seg.of(data, i)));
  }
  for (let i = 0; i < p; i++) {
    if (last) {
      if (scale !== null) scaleChunk(tl, data, seg, i, scale);
    } else {
      const incoming = await tl.recv(line.fwd, seg.count(i), data.dtype);
      data.data.set(incoming.data, seg.lo(i));
    }
    if (pos > 0) sends.push(tl.send(line.back, seg.of(data, i)));
  }
  for (const s of sends) await s;
}

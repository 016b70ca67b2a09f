// Runs on: a host thread (main, or the executor that runs a spawned rank).
// Owns: one host's view of the device — its virtual clock, its device (SIP),
// launches and their handles (worker-wait), the host-read barrier's drain, and
// host-level barriers across ranks.
import { KernelError, KernbenchError, reviveError } from '../errors.js';
import type { Kernel } from '../kernel/define.js';
import { portsOf, type World } from '../ccl/world.js';
import type { Port, Ports } from '../kernel/ports.js';
import { DIRECTIONS, HEADER, PE, RECORD, WAIT_KIND } from '../shm/layout.js';
import { postCommand } from '../pe/commands.js';
import type { BroadcastListener } from '../sync/scheduler.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import { VirtualClock } from '../time/virtual-clock.js';
import { MAIN_ACTOR, kernelActor, raceLog } from '../race/log.js';

/** What the last arrival at a barrier returns: it has nothing to wait for. */
const RESOLVED: Promise<void> = Promise.resolve();
/**
 * The port tables made for a world's launches, by rank, declared sends and kernel: a
 * world's tables depend on nothing else, so a launch takes the table made for the last
 * like it. A table is read only, by the kernel it is handed to (lib/kernel/ports.ts),
 * which on the host's own thread gets it in memory (lib/pe/commands.ts). Decision 0288.
 */
const portTables = new WeakMap<World, Map<string, Ports>>();

export interface PeTiming {
  pe: number;
  startPs: number;
  endPs: number;
  /** What the kernel reported as spent waiting on communication (tl.reportWaitPs), in ps; 0 if it reported nothing. */
  waitPs: number;
}

/** What an asynchronous launch returns. Awaiting it is worker-wait: fast when done, idempotent. */
export class LaunchHandle implements PromiseLike<void> {
  done = false;
  error: Error | undefined;
  timings: PeTiming[] = [];
  private waiting: Promise<void> | undefined;

  constructor(
    private readonly host: HostRuntime,
    readonly name: string,
    readonly pes: number[],
    /** Per PE, the launch's ticket (PE.LAUNCHED): kernels on a PE run in ticket order unless ordered. */
    readonly seqs: number[],
    /** Per PE, whether the launch is ordered by (virtual time, host) on a shared PE (lib/pe/admission.ts). */
    readonly ordered: boolean[],
    /** Per PE, the kernels it had finished when this launch was made: an ordered kernel runs no earlier. */
    readonly doneAtLaunch: number[],
    readonly posted: Promise<void>,
    /** Collective launches are drained by their own completion, not by the host-read barrier. */
    readonly collective: boolean,
  ) {}

  /** Max over this launch's PEs of their execution time (ps): the kernel's crit. */
  get critPs(): number {
    return this.timings.reduce((m, t) => Math.max(m, t.endPs - t.startPs), 0);
  }

  get endPs(): number {
    return this.timings.reduce((m, t) => Math.max(m, t.endPs), 0);
  }

  wait(): Promise<void> {
    if (this.done) return this.error ? Promise.reject(this.error) : Promise.resolve();
    this.waiting ??= this.host.complete(this);
    return this.waiting;
  }

  then<R1 = void, R2 = never>(ok?: ((v: void) => R1 | PromiseLike<R1>) | null, fail?: ((e: unknown) => R2 | PromiseLike<R2>) | null): PromiseLike<R1 | R2> {
    return this.wait().then(ok, fail);
  }
}

export interface LaunchOptions {
  pes: number[];
  /** The world each PE's kernel sees (one for all, or one per PE). */
  world: World | World[];
  /** Per PE, its CCL rank in `world` (default: its index in `pes`). */
  ranks?: number[];
  tag?: number;
  collective?: boolean;
  /**
   * The directions (DIRECTIONS indices) its kernels send on, when the launch declares them:
   * a send in another is refused (ERR_SEND_UNDECLARED), and shared links are claimed for
   * these only, so a ring of two that sends east only is alone on its link (decision 0188).
   */
  sends?: readonly number[];
}

export class HostRuntime implements BroadcastListener {
  /** This host's virtual time (a rank's host code, or main's). */
  readonly clock = new VirtualClock();
  get clockPs(): number {
    return this.clock.nowPs;
  }
  device = 0;
  /** The ranks of the live spawn (0: none; main's is set while its spawn lives, a rank's for its life): SIP r < spawnRanks is rank r's (orderedOnto). */
  spawnRanks = 0;
  readonly pending = new Set<LaunchHandle>();
  private barrierRound = 0;
  /** Ranks in this host's barriers (barrier's n: the spawn's world size). */
  private barrierRanks = 0;
  /** This host's actor for the race check (--check-races): main's, or the spawned rank's (lib/executor/executor.ts sets it). */
  raceActor = MAIN_ACTOR;
  /** Launches so far, and the last launch sequence per PE (the race check's record only: made by its first launch, not a Map a rank). */
  private raceLaunches = 0;
  private raceLastSeq: Map<number, number> | undefined;

  constructor(
    readonly env: ThreadEnv,
    /** Host index: the rank for spawned ranks; layout.mainHost for the main thread. */
    readonly host: number,
    /** Barrier arrivals already counted when this host's ranks were spawned (earlier spawns of the session). */
    private readonly barrierBase = 0,
  ) {}

  get actor(): number {
    return this.env.shared.layout.hostActor(this.host);
  }

  launch<A extends unknown[]>(name: string, kernel: Kernel<A>, args: unknown[], opts: LaunchOptions): LaunchHandle {
    const { shared, sched, plan } = this.env;
    const L = shared.layout;
    sched.checkAbort();
    const ordered = opts.pes.map((pe) => this.orderedOnto(name, pe));
    const doneAtLaunch = opts.pes.map((pe, i) => (ordered[i] ? Atomics.load(shared.ctl, L.pe(pe, PE.DONE_SEQ)) : 0));
    const seqs = opts.pes.map((pe) => Atomics.add(shared.ctl, L.pe(pe, PE.LAUNCHED), 1));
    if (raceLog.on) this.raceLaunch(name, opts.pes, seqs);
    const posted = (async () => {
      for (let i = 0; i < opts.pes.length; i++) {
        const pe = opts.pes[i];
        await postCommand(shared, sched, this.actor, plan.peExecutor[pe], {
          type: 'launch',
          pe,
          seq: seqs[i],
          ordered: ordered[i],
          host: this.host,
          hostExecutor: sched.executor,
          kernel: kernel.ref,
          name,
          args,
          ports: this.portsFor(name, Array.isArray(opts.world) ? opts.world[i] : opts.world, opts.ranks ? opts.ranks[i] : i, opts.sends),
          rank: opts.ranks ? opts.ranks[i] : i,
          startPs: this.clockPs,
          tag: opts.tag ?? -1,
        });
      }
    })();
    posted.catch(() => undefined);
    const h = new LaunchHandle(this, name, opts.pes, seqs, ordered, doneAtLaunch, posted, opts.collective ?? false);
    this.pending.add(h);
    return h;
  }

  /** Worker-wait on one handle (call through handle.wait()). */
  async complete(h: LaunchHandle): Promise<void> {
    const { shared, sched } = this.env;
    const L = shared.layout;
    try {
      await h.posted;
      const runs: number[] = [];
      try {
        for (let i = 0; i < h.pes.length; i++) {
          const done = L.pe(h.pes[i], PE.DONE_SEQ);
          // Unordered (the fast path): one wait, for run `ticket`. Ordered: one wait per kernel the PE finishes, until it is this one.
          while ((runs[i] = this.finishedRun(h, i)) < 0) {
            const target = h.ordered[i] ? Atomics.load(shared.ctl, done) + 1 : h.seqs[i] + 1;
            await sched.waitUntil(this.actor, done, target, WAIT_KIND.KERNEL_DONE, h.pes[i], this.clockPs);
          }
        }
      } catch (e) {
        // An abort can reach this waiter after its kernels have ended (a kernel that fails
        // by a fault publishes its end, then aborts the session): their own outcome wins.
        if (!h.pes.every((_, i) => (runs[i] = this.finishedRun(h, i)) >= 0)) throw e;
      }
      let failure: Error | undefined;
      h.timings = h.pes.map((pe, i) => {
        const t = shared.times;
        const status = t[L.record(pe, runs[i], RECORD.STATUS)];
        const endPs = t[L.record(pe, runs[i], RECORD.END_PS)];
        if (status !== 0 && !failure) {
          const slot = shared.readErrorSlot(pe);
          // A kernel unwound by a session abort or a deadlock is not a root cause: the
          // host sees the same abort it would have seen waiting (see docs/spawn.md).
          const unwound = slot && (slot.error.name === 'AbortError' || slot.error.name === 'DeadlockError');
          // A deadlock: the session's report (read once per thread), not the PE slot's stand-in.
          failure = unwound ? (slot.error.name === 'DeadlockError' ? this.env.sched.abortError() : reviveError(slot.error)) : new KernelError(h.name, this.env.machine.coord(pe), slot?.atPs ?? endPs, slot?.error ?? { name: 'Error', message: 'unknown kernel failure', stack: undefined, code: undefined, fields: {} });
        }
        return { pe, startPs: t[L.record(pe, runs[i], RECORD.START_PS)], endPs, waitPs: t[L.record(pe, runs[i], RECORD.WAIT_PS)] };
      });
      if (raceLog.on && !failure) raceLog.acquire(this.raceActor, h.pes.map((pe, i) => `E:${pe}:${h.seqs[i]}`));
      const waitedFrom = this.clockPs;
      this.clock.advanceTo(h.endPs);
      this.env.trace?.hostSpan(this.host, `wait ${h.name}`, waitedFrom, this.clockPs);
      if (failure) throw failure;
    } catch (e) {
      h.error = e instanceof Error ? e : new KernbenchError('ERR_INTERNAL', String(e));
      throw h.error;
    } finally {
      h.done = true;
      this.pending.delete(h);
    }
  }

  /**
   * The run index (record row) of launch `i` of `h` if its kernel has finished, else -1.
   * Run k's row names its ticket (RECORD.TICKET). An unordered kernel runs once every
   * lower ticket has run, so at run index >= its ticket (equal, unless an ordered
   * launch ran ahead); an ordered one at run index >= the PE's count at launch.
   */
  private finishedRun(h: LaunchHandle, i: number): number {
    const { shared } = this.env;
    const L = shared.layout;
    const t = shared.times;
    const pe = h.pes[i];
    const ticket = h.seqs[i];
    const done = Atomics.load(shared.ctl, L.pe(pe, PE.DONE_SEQ));
    for (let k = h.ordered[i] ? h.doneAtLaunch[i] : ticket; k < done; k++) if (t[L.record(pe, k, RECORD.TICKET)] === ticket) return k;
    return -1;
  }

  /**
   * Whether a launch by this host onto `pe` is ordered: yes on a PE shared by the live
   * spawn's hosts (PE.SHARED), no on the host's own PEs. During a spawn rank r owns
   * SIP r and main every SIP no rank runs on; a launch onto another host's PE, not
   * shared, would race that host's launches in arrival order, so it is refused.
   */
  private orderedOnto(name: string, pe: number): boolean {
    const { shared, machine } = this.env;
    if (Atomics.load(shared.ctl, shared.layout.pe(pe, PE.SHARED)) !== 0) return true;
    const sip = machine.coord(pe).sip;
    const isMain = this.host === shared.layout.mainHost;
    const owner = sip < this.spawnRanks ? `rank ${sip}` : 'main';
    if (isMain ? owner === 'main' : sip === this.host) return false;
    const who = isMain ? 'the main host' : `rank ${this.host}'s host`;
    throw new KernbenchError(
      'ERR_LAUNCH_FOREIGN_PE',
      `launch '${name}' by ${who} onto ${machine.describePe(pe)}: during a spawn that PE belongs to ${owner} (rank r launches on SIP r, main on the SIPs no rank runs on); to launch onto one PE from several hosts, pass a tensor on it in the spawn's args (the PE is then shared, and launches onto it run in virtual-time order), got a launch onto SIP ${sip}`,
    );
  }

  /** The host-read barrier's drain: wait for every pending non-collective launch of this host. */
  async drain(): Promise<void> {
    for (;;) {
      const next = [...this.pending].find((h) => !h.collective);
      if (!next) return;
      await next.wait();
    }
  }

  /** Are all non-collective launches complete (so a synchronous read may proceed)? */
  hasPendingLaunches(): boolean {
    return [...this.pending].some((h) => !h.collective);
  }

  /** Wait for every pending launch, collectives included (torch.synchronize). */
  async synchronize(): Promise<void> {
    for (;;) {
      const next = this.pending.values().next();
      if (next.done) return;
      await next.value.wait();
    }
  }

  /**
   * A barrier across the `n` ranks 0..n-1 on counters that only go up: the k-th
   * barrier of this spawn completes when total arrivals reach base + (k + 1) * n,
   * base being the arrivals of earlier spawns. Each rank's virtual clock becomes
   * the latest arrival time. Not an async function, and the last arrival settles
   * without waiting: the bench loop awaits it directly, and every promise is a
   * promise hook on a thread with several fault owners (lib/sync/fault-owner.ts).
   * A waiting rank leaves the barrier as its wait settles (Scheduler calls
   * woke, this host's BroadcastListener), with no promise chained on the wait.
   * Never throws: failures (an abort) are rejections.
   */
  barrier(n: number): Promise<void> {
    try {
      const { shared, sched } = this.env;
      const k = this.barrierRound++;
      this.barrierRanks = n;
      shared.times[shared.layout.barrierTime(k, this.host)] = this.clockPs;
      if (raceLog.on) raceLog.release(this.raceActor, [`B:${this.barrierBase}:${k}`]);
      const target = this.barrierBase + (k + 1) * n;
      // Only the last arrival can complete the barrier: it alone wakes the others, with one notify (Scheduler.broadcast).
      if (Atomics.add(shared.ctl, HEADER.BARRIER_ARRIVALS, 1) + 1 === target) {
        sched.broadcast(HEADER.BARRIER_ARRIVALS);
        this.woke(k);
        return RESOLVED;
      }
      return sched.waitBroadcast(this.actor, HEADER.BARRIER_ARRIVALS, target, WAIT_KIND.BARRIER, k, this.clockPs, this);
    } catch (e) {
      return Promise.reject(e as Error);
    }
  }

  /** Barrier k is complete (BroadcastListener): advance to its latest arrival, and record it. */
  woke(k: number): void {
    const { shared } = this.env;
    const arrivedPs = this.clockPs;
    // The n ranks' arrival times are consecutive words (ShmLayout.barrierTime).
    const t = shared.times;
    const first = shared.layout.barrierTime(k, 0);
    let latest = arrivedPs;
    for (let i = first, end = first + this.barrierRanks; i < end; i++) if (t[i] > latest) latest = t[i];
    this.clock.advanceTo(latest);
    this.env.trace?.barrier(this.barrierBase, k, this.host, arrivedPs, this.clockPs);
    if (raceLog.on) raceLog.acquire(this.raceActor, [`B:${this.barrierBase}:${k}`]);
  }

  /** The port table of `rank` in `world` for a launch of `name` (launchPorts). */
  private portsFor(name: string, world: World, rank: number, sends: readonly number[] | undefined): Ports {
    return launchPorts(name, world, rank, sends, (this.env.plan.ccl.peer_ranks ?? 0) > 0);
  }

  /**
   * The race check's record of a launch: it orders this host's past before each
   * kernel, and a PE runs one host's launches in the order they were made (so
   * this host's previous kernel on a PE ends before the next starts); launches by
   * two hosts on one PE are not ordered (their queue order is wall-clock order).
   */
  private raceLaunch(name: string, pes: number[], seqs: number[]): void {
    const m = this.env.machine;
    const n = this.raceLaunches++;
    const host = raceLog.metaOf(this.raceActor);
    const lastSeq = (this.raceLastSeq ??= new Map());
    pes.forEach((pe, i) => {
      const prev = lastSeq.get(pe);
      if (prev !== undefined) raceLog.link(`E:${pe}:${prev}`, `L:${pe}:${seqs[i]}`);
      lastSeq.set(pe, seqs[i]);
      raceLog.name(kernelActor(pe, seqs[i]), { label: `kernel '${name}' on ${m.describePe(pe)} (launched by ${host.label})`, order: [...host.order, 1, n, pe] });
    });
    raceLog.release(this.raceActor, pes.map((pe, i) => `L:${pe}:${seqs[i]}`));
  }
}

/**
 * The port table a launch of kernel `name` gives `rank` of `world`: where each direction
 * sends and receives, a direction not among the launch's declared `sends` holding the
 * error a send there raises (its receive port stays), and with `peers` (ccl.peer_ranks)
 * the world's PEs. Made once for the same inputs and given again (portTables).
 */
export function launchPorts(name: string, world: World, rank: number, sends: readonly number[] | undefined, peers: boolean): Ports {
  let made = portTables.get(world);
  if (made === undefined) portTables.set(world, (made = new Map()));
  const key = sends === undefined ? `${rank}|${peers}` : `${rank}|${peers}|${sends.join(',')}|${name}`;
  const known = made.get(key);
  if (known !== undefined) return known;
  let ports = portsOf(world, rank);
  if (sends !== undefined && ports.send.some((p, d) => !sends.includes(d) && !('code' in p))) {
    // Worded when used (lib/kernel/ports.ts portOf, from `why`).
    const send = ports.send.map((p, d): Port => (sends.includes(d) || 'code' in p ? p : { code: 'ERR_SEND_UNDECLARED' }));
    ports = { ...ports, send, why: { rank, world: `${world.kind} world of ${world.w}x${world.h}`, kernel: name, declared: sends.map((d) => DIRECTIONS[d]).join(', ') } };
  }
  if (peers) ports = { ...ports, pes: world.pes };
  made.set(key, ports);
  return ports;
}

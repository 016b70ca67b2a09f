// Runs on: main. Owns: one Session: its shared buffers, the executor tasks
// serving it, spawn, abort and teardown. The threads it runs on are the
// process's, reused across sessions (./thread-resources.ts).
//
// Life of a session:
//   open    create buffers; start one executor task per executor on the pool
//           and the coordinator's pass loop; wait for every `ready`.
//   use     main host launches / spawns ranks (ports: spawn-rank, rank-done,
//           rank-failed); all steady-state traffic is Atomics on the buffers.
//   end     set SESSION_END, post `end`; tasks return reports; records are read.
// A failed spawn aborts the session (ABORT + every doorbell), waits for every
// rank to unwind, ends it, and opens a fresh one on the same threads.
import { importModule } from '../loader/user-module.js';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { AbortError, DeadlockError, KernbenchError, SpawnError, reviveError, serializeError, type SerializedError } from '../errors.js';
import { HostRuntime } from '../host/host-runtime.js';
import { Torch, type Spawner } from '../host/torch.js';
import { ABORT_KIND, ACTOR_STATE, ACTORS_PER_PE, HEADER, PE, RECORD, WAIT_KIND } from '../shm/layout.js';
import { SharedState } from '../shm/shared-state.js';
import { isTensorDesc } from '../shm/tensor-desc.js';
import { abortSession, ringCoordinator, syncCounts, type SyncCounts } from '../sync/wake.js';
import { unreachable, type ExecutorReport, type FromCoordinator, type FromExecutor, type ToCoordinator, type ToExecutor } from '../sync/messages.js';
import type { SessionPlan } from '../config/plan.js';
import type { ThreadTraceData } from '../trace/recorder.js';
import { ThreadEnv, addLinkPieces, noLinkPieces, type LinkPieces } from '../sync/thread-env.js';
import type { ThreadResources } from './thread-resources.js';
import { releaseIdleHeap } from './idle-heap.js';
import { tabulate } from '../tabulate.js';
import { actorStates } from '../coordinator/actor-states.js';
import type { Machine } from '../topology/machine.js';
import { MAIN_ACTOR, raceLog } from '../race/log.js';
import { dataRaceError, findRace } from '../race/check.js';

export interface PeRecord {
  pe: number;
  seq: number;
  startPs: number;
  endPs: number;
  status: number;
  tag: number;
}

export interface SessionReport {
  records: PeRecord[];
  /** Every thread's trace records (main's first), when traced. */
  trace: ThreadTraceData[];
  messages: number;
  /** How the pieces of shared links were timed, summed over the executors (decision 0100). */
  linkPieces: LinkPieces;
  /** Young-generation collections the executors ran when idle after a kernel epoch (./young-gc.ts). */
  epochGcs: number;
  coordinatorPasses: number;
  /**
   * Grants the coordinator made in a pass that no ring asked for (its wait timed out).
   * With the default 20 ms timer a timer pass may beat a ring still on its way; with a
   * long timer (coordinatorTimerMs) a non-zero count is a lost wake-up of the arbiter
   * (lib/coordinator/coordinator-worker.ts).
   */
  unrungGrants: number;
  /**
   * Link-arbiter passes that made nothing final because their snapshot of the actors never
   * held: actors kept changing state through every try (lib/coordinator/link-arbiter.ts).
   * Passes rung while a thread still runs actors end so (decision 0275).
   */
  linkSnapshotsFailed: number;
  /** How often the threads synchronised (lib/sync/wake.ts, decision 0126). */
  sync: SyncCounts;
}

interface RankOutcome {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export class Session implements Spawner {
  shared!: SharedState;
  env!: ThreadEnv;
  host!: HostRuntime;
  /** The main host's torch; survives a recovery (it is re-bound to the fresh buffers). */
  readonly torch: Torch;
  private ports: MessagePort[] = [];
  private tasks: Promise<ExecutorReport>[] = [];
  private coordinatorDone: Promise<FromCoordinator> | undefined;
  private readonly rankWaiters = new Map<number, RankOutcome>();
  /** Modules whose exports spawn may run (the bench module, registered by the loader). */
  readonly spawnModules: string[] = [];
  private ended = false;
  /** Sessions' worth of buffers used so far (1 + recoveries after failed spawns). */
  epoch = 0;
  /** The reports of the epochs that a failed spawn ended, in order (their records feed --log and --stats). */
  readonly failedEpochs: SessionReport[] = [];
  private constructor(
    readonly resources: ThreadResources,
    readonly plan: SessionPlan,
  ) {
    this.fresh();
    this.torch = new Torch(this.host, { rank: 0, nprocs: 1 }, this);
  }

  static async open(resources: ThreadResources, plan: SessionPlan): Promise<Session> {
    const s = new Session(resources, plan);
    await s.start();
    return s;
  }

  /** New buffers and main-thread services. */
  private fresh(): void {
    this.shared = SharedState.create(this.plan.dims);
    // A failed spawn's epoch is over: its memory and its record go together.
    raceLog.reset(this.plan.checkRaces);
    this.env = new ThreadEnv(this.plan, this.shared, this.shared.layout.mainExecutor);
    this.host = new HostRuntime(this.env, this.shared.layout.mainHost);
    this.ports = [];
    this.tasks = [];
    this.coordinatorDone = undefined;
    this.ended = false;
    this.epoch++;
  }

  private async start(): Promise<void> {
    this.resources.open = this;
    const L = this.shared.layout;
    for (let h = 0; h < L.dims.hosts; h++) this.env.sched.setState(L.hostActor(h), ACTOR_STATE.DONE);
    this.env.sched.setState(this.host.actor, ACTOR_STATE.RUNNING);

    // The pool first: the V8 flags it sets for its isolates (./thread-flags.ts) reach the coordinator too when this session starts it.
    const pool = this.resources.executorPool(this.plan.executors, this.plan.hostExecutor.length);
    const coord = this.resources.coordinatorThread();
    this.coordinatorDone = new Promise<FromCoordinator>((resolve) => {
      const onMessage = (m: FromCoordinator): void => {
        coord.off('message', onMessage);
        resolve(m);
      };
      coord.on('message', onMessage);
    });
    coord.postMessage({ type: 'session', plan: this.plan, buffers: this.shared.buffers, timerMs: this.resources.coordinatorTimerMs });

    const ready: Promise<void>[] = [];
    for (let e = 0; e < this.plan.executors; e++) {
      const { port1, port2 } = new MessageChannel();
      this.ports.push(port1);
      ready.push(
        new Promise<void>((resolve) => {
          const first = (m: FromExecutor): void => {
            if (m.type === 'ready') {
              port1.off('message', first);
              resolve();
            }
          };
          port1.on('message', first);
        }),
      );
      port1.on('message', (m: FromExecutor) => this.onExecutorMessage(m));
      const task = pool.run({ executor: e, plan: this.plan, dims: this.plan.dims, buffers: this.shared.buffers, port: port2, epochGc: this.resources.epochGc }, { transferList: [port2] }) as Promise<ExecutorReport>;
      const shared = this.shared;
      task.catch((x: unknown) => this.executorLost(shared, e, x));
      this.tasks.push(task);
    }
    const failed = Promise.race(this.tasks.map((t) => t.then(() => new Promise<never>(() => undefined))));
    await Promise.race([Promise.all(ready), failed]);
  }

  private onExecutorMessage(m: FromExecutor): void {
    switch (m.type) {
      case 'ready':
        break;
      case 'rank-done':
        this.rankWaiters.get(m.rank)?.resolve({ value: m.value, clockPs: m.clockPs });
        break;
      case 'rank-failed':
        // No abort here: the coordinator aborts the other ranks once nothing else can
        // happen, so every rank that fails on its own is a root cause, whatever the
        // timing (docs/decisions/0015-root-causes-at-quiescence.md).
        this.rankWaiters.get(m.rank)?.reject(reviveError(m.error));
        break;
      default:
        unreachable(m);
    }
  }

  /**
   * An executor task failed (its thread died, or it stopped serving): its ranks will
   * never report, so they fail now with that error, and the session aborts so that
   * nobody waits for its PEs. `shared` is the epoch the task served.
   */
  private executorLost(shared: SharedState, executor: number, x: unknown): void {
    if (shared !== this.shared) return; // an old epoch's task, already ended
    const lost = lostExecutorError(shared, this.plan, this.env.machine, executor, x);
    abortSession(shared, ABORT_KIND.FAULT, serializeError(lost));
    this.plan.hostExecutor.forEach((e, rank) => {
      if (e === executor) this.rankWaiters.get(rank)?.reject(lost);
    });
  }

  get aborted(): boolean {
    return Atomics.load(this.shared.ctl, HEADER.ABORT) !== 0;
  }

  /** Run `fn(rank, ...args, torch)` once per rank on the rank's executor (see Torch.multiprocessing.spawn). */
  async spawn(fn: (...a: never[]) => unknown, opts: { args: unknown[]; nprocs: number }): Promise<{ join(): Promise<unknown[]> }> {
    const where = await this.locate(fn);
    const L = this.shared.layout;
    const settled0 = Atomics.load(this.shared.ctl, HEADER.RANKS_SETTLED);
    // Earlier spawns' barriers are all complete (their ranks joined): this spawn counts from here.
    const barrierBase = Atomics.load(this.shared.ctl, HEADER.BARRIER_ARRIVALS);
    // The race check: main's past happens before each rank's code (the rank's thread names it alike).
    const raceActors = raceLog.on ? tabulate(opts.nprocs, (rank) => raceLog.spawnRank(rank)) : [];
    if (raceLog.on) raceLog.release(MAIN_ACTOR, raceActors.map((a) => `S:${a}`));
    this.share(opts.args, opts.nprocs);
    const results = tabulate(opts.nprocs, (rank) => {
      const p = new Promise<unknown>((resolve, reject) => this.rankWaiters.set(rank, { resolve, reject }));
      this.env.sched.setState(L.hostActor(rank), ACTOR_STATE.RUNNING);
      const msg: ToExecutor = { type: 'spawn-rank', rank, nprocs: opts.nprocs, module: where.module, exportName: where.exportName, args: opts.args, barrierBase, startPs: this.host.clockPs };
      this.ports[this.plan.hostExecutor[rank]].postMessage(msg);
      return p;
    });
    const all = Promise.allSettled(results);
    let joined: Promise<unknown[]> | undefined;
    // Main is only BLOCKED (for the deadlock detector and the grants) while it
    // actually waits in join(); with join: false it may run other work meanwhile.
    return { join: () => (joined ??= this.join(all, settled0 + opts.nprocs, opts.nprocs, raceActors)) };
  }

  private async join(all: Promise<PromiseSettledResult<unknown>[]>, target: number, nprocs: number, raceActors: string[]): Promise<unknown[]> {
    this.env.sched.block(this.host.actor, HEADER.RANKS_SETTLED, target, WAIT_KIND.RANKS_DONE, nprocs, this.host.clockPs);
    releaseIdleHeap(nprocs);
    const outcomes = await all;
    this.env.sched.unblock(this.host.actor);
    this.unshare();
    this.rankWaiters.clear();
    if (outcomes.every((o) => o.status === 'fulfilled')) {
      // The ranks' hosts ran ahead in virtual time: main continues from the latest of them.
      const values = outcomes.map((o) => (o as PromiseFulfilledResult<{ value: unknown; clockPs: number }>).value);
      for (const v of values) this.host.clock.advanceTo(v.clockPs);
      if (raceLog.on) raceLog.acquire(MAIN_ACTOR, raceActors.map((a) => `J:${a}`));
      return values.map((v) => v.value);
    }

    // Root causes: every rank that failed on its own. The session aborted only once nothing
    // else could happen (the coordinator, at quiescence), so this set does not depend on
    // timing (docs/decisions/0015-root-causes-at-quiescence.md); faults are the exception.
    const kind = Atomics.load(this.shared.ctl, HEADER.ABORT_KIND);
    // The fault's or the deadlock's report, read once (ranks aborted by a deadlock send no copy of it).
    const report = kind === ABORT_KIND.FAULT || kind === ABORT_KIND.DEADLOCK ? this.shared.readErrorSlot(-1) : undefined; // before recover() drops the buffers
    const errors = new Map<number, Error>();
    outcomes.forEach((o, rank) => {
      if (o.status === 'rejected' && !(o.reason instanceof AbortError) && !(o.reason instanceof DeadlockError)) errors.set(rank, o.reason as Error);
    });
    // A PE passed the virtual-time limit: the run stops with its report; no fresh epoch.
    const stopped = this.stoppedError();
    if (stopped) throw stopped;
    await this.recover();
    if (errors.size > 0) throw new SpawnError(errors);
    // A deadlock (its report), or a fault nobody could fail in its place (a callback that threw after its rank or kernel ended).
    if (report) throw reviveError(report.error);
    throw new KernbenchError('ERR_INTERNAL', 'spawn failed but no rank reported a root cause');
  }

  /** The report of a run stopped by the virtual-time limit (lib/pe/pe-runtime.ts), once a PE has written it; else undefined. */
  stoppedError(): Error | undefined {
    if (Atomics.load(this.shared.ctl, HEADER.ABORT_KIND) !== ABORT_KIND.STOPPED || Atomics.load(this.shared.ctl, HEADER.ABORT) === 0) return undefined;
    const report = this.shared.readErrorSlot(-1);
    return report ? reviveError(report.error) : undefined;
  }

  /**
   * Open a spawn's sharing (decision 0090): SIPs below `nprocs` become the ranks', and
   * every PE holding a shard of a tensor among `args` (at any depth of arrays and plain
   * objects) is shared, so launches onto it from any host run in (virtual time, host)
   * order. Written before any rank starts, cleared after every rank has settled.
   */
  private share(args: unknown[], nprocs: number): void {
    const L = this.shared.layout;
    const m = this.env.machine;
    const seen = new Set<unknown>();
    const walk = (x: unknown): void => {
      if (typeof x !== 'object' || x === null || ArrayBuffer.isView(x) || seen.has(x)) return;
      seen.add(x);
      if (isTensorDesc(x)) for (const s of x.shards) Atomics.store(this.shared.ctl, L.pe(m.peId(s), PE.SHARED), 1);
      else for (const v of Array.isArray(x) ? x : Object.values(x)) walk(v);
    };
    walk(args);
    this.host.spawnRanks = nprocs;
  }

  /** Close the spawn's sharing (every rank has settled). */
  private unshare(): void {
    const L = this.shared.layout;
    for (let pe = 0; pe < L.dims.pes; pe++) Atomics.store(this.shared.ctl, L.pe(pe, PE.SHARED), 0);
    this.host.spawnRanks = 0;
  }

  /** Find the module and export name of a spawn target among the registered modules (like pickle, spawn needs an importable function). */
  private async locate(fn: (...a: never[]) => unknown): Promise<{ module: string; exportName: string }> {
    for (const module of this.spawnModules) {
      const mod = await importModule(module);
      for (const [exportName, v] of Object.entries(mod)) if (v === fn) return { module, exportName };
    }
    throw new KernbenchError('ERR_NOT_EXPORTED', `spawn needs a function exported from a registered module (${this.spawnModules.join(', ') || 'none registered'}), got '${fn.name || 'anonymous'}'`);
  }

  /**
   * After an abort: end this epoch's work on every thread, then start clean
   * buffers on the same threads. Device memory of the failed epoch is gone;
   * the main torch is re-bound to the new buffers.
   */
  private async recover(): Promise<void> {
    this.failedEpochs.push(await this.finish(false));
    this.fresh();
    this.torch.rebind(this.host, this);
    await this.start();
  }

  /** End the session: executors stop serving and report; PE records are read. */
  async end(): Promise<SessionReport> {
    return this.finish(true);
  }

  /**
   * End this epoch. `reportFailures`: throw a fault that aborted the epoch, or an
   * executor that was lost — unless a failed spawn's join already reported them
   * (recover()).
   */
  private async finish(reportFailures: boolean): Promise<SessionReport> {
    if (this.ended) throw new KernbenchError('ERR_INTERNAL', 'session ended twice');
    this.ended = true;
    if (this.resources.open === this) this.resources.open = undefined;
    Atomics.add(this.shared.ctl, HEADER.SESSION_END, 1);
    // A ring, not a bare notify: a coordinator about to wait would miss a notify and sleep its whole timer.
    ringCoordinator(this.shared.ctl);
    this.env.sched.stop(new AbortError('session ended'));
    for (const p of this.ports) p.postMessage({ type: 'end' } satisfies ToExecutor);
    const settled = await Promise.allSettled(this.tasks);
    for (const p of this.ports) p.close();
    const coord = await this.coordinatorDone;
    if (coord?.type === 'fatal') throw reviveError(coord.error as SerializedError);
    const stopped = this.stoppedError();
    if (reportFailures && stopped) throw stopped;
    // A fault that aborted the session and that no spawn reported (main was not joining): the run failed.
    if (reportFailures && Atomics.load(this.shared.ctl, HEADER.ABORT_KIND) === ABORT_KIND.FAULT) {
      const report = this.shared.readErrorSlot(-1);
      if (report) throw reviveError(report.error);
    }
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed && reportFailures) throw new KernbenchError('ERR_EXECUTOR_LOST', `an executor stopped while serving the session: ${String(failed.reason)}`, { cause: failed.reason });
    const reports = settled.filter((r): r is PromiseFulfilledResult<ExecutorReport> => r.status === 'fulfilled').map((r) => r.value);
    if (reportFailures && this.plan.checkRaces) {
      const race = findRace([raceLog.take(), ...reports.map((r) => r.races).filter((x) => x !== null)]);
      if (race) throw dataRaceError(race);
    }
    const trace = [this.env.trace?.data, ...reports.map((r) => r.trace)].filter((x): x is ThreadTraceData => x !== null && x !== undefined);
    return {
      trace,
      records: this.readRecords(),
      messages: reports.reduce((n, r) => n + r.messages, 0),
      linkPieces: reports.reduce((n, r) => addLinkPieces(n, r.linkPieces), noLinkPieces()),
      epochGcs: reports.reduce((n, r) => n + r.epochGcs, 0),
      coordinatorPasses: coord?.type === 'session-done' ? coord.passes : 0,
      unrungGrants: coord?.type === 'session-done' ? coord.unrungGrants : 0,
      linkSnapshotsFailed: coord?.type === 'session-done' ? coord.linkSnapshotsFailed : 0,
      sync: syncCounts(this.shared, this.plan.peExecutor),
    };
  }

  /** Every PE's finished kernels with their virtual start and end, by PE then sequence. */
  readRecords(): PeRecord[] {
    const L = this.shared.layout;
    const t = this.shared.times;
    const out: PeRecord[] = [];
    for (let pe = 0; pe < L.dims.pes; pe++) {
      const done = Atomics.load(this.shared.ctl, L.pe(pe, PE.DONE_SEQ));
      for (let seq = Math.max(0, done - 4096); seq < done; seq++) {
        out.push({
          pe,
          seq,
          startPs: t[L.record(pe, seq, RECORD.START_PS)],
          endPs: t[L.record(pe, seq, RECORD.END_PS)],
          status: t[L.record(pe, seq, RECORD.STATUS)],
          tag: t[L.record(pe, seq, RECORD.TAG)],
        });
      }
    }
    return out;
  }
}

/**
 * The error of an executor thread that ended while it served the session, naming what
 * ran on it (read from the kernel-name slots and actor states, as a stopped run's report):
 * the kernels running on its PEs (the first also as `kernel` and `pe`), or its ranks. A
 * thread that ran out of JavaScript heap (Worker's ERR_WORKER_OUT_OF_MEMORY) is
 * ERR_EXECUTOR_OUT_OF_MEMORY; any other end is ERR_EXECUTOR_LOST.
 */
function lostExecutorError(shared: SharedState, plan: SessionPlan, machine: Machine, executor: number, x: unknown): KernbenchError {
  const L = shared.layout;
  const peActors = L.dims.pes * ACTORS_PER_PE;
  const here = actorStates(shared, machine).actors.filter((a) =>
    a.actor < peActors ? plan.peExecutor[Math.floor(a.actor / ACTORS_PER_PE)] === executor : a.rank !== undefined && plan.hostExecutor[a.rank] === executor,
  );
  // The kernels that were running (not waiting) on its PEs: one of them exhausted the heap, or was running when the thread died.
  const kernels = here.filter((a) => a.actor < peActors && a.actor % ACTORS_PER_PE === 0 && a.state === 'running' && a.kernel !== undefined);
  const first = kernels[0];
  const what = kernels.length > 0 ? `while running ${kernels.map((k) => `kernel '${k.kernel}' on ${machine.describePe(Math.floor(k.actor / ACTORS_PER_PE))}`).join(', ')}` : here.length > 0 ? `while serving ${here.map((a) => a.who).join(', ')}` : 'with no kernel running';
  const oom = (x as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
  const why = x instanceof Error ? `${x.name}: ${x.message}` : String(x);
  return new KernbenchError(
    oom ? 'ERR_EXECUTOR_OUT_OF_MEMORY' : 'ERR_EXECUTOR_LOST',
    oom ? `executor ${executor} ran out of JavaScript heap ${what}: ${why}` : `executor ${executor} stopped ${what}: ${why}`,
    { cause: x, kernel: first?.kernel, pe: first?.pe, atPs: first?.atPs },
  );
}

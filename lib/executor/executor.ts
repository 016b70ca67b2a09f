// Runs on: an executor thread (a piscina worker), for one session. Owns: the
// PEs placed on this thread and the spawned ranks whose host code runs here;
// serves this thread's command queue (kernel launches from any host) and its
// port (spawn and teardown from main).
//
// Start-up handshake: attach to the session's buffers, create the PEs, post
// `ready`. The task resolves with an ExecutorReport when main posts `end`.
//
// Errors that escape every promise chain on this thread fail their rank or
// kernel, or abort the session (./faults.ts): they never end the thread.
import { importModule } from '../loader/user-module.js';
import { ensureSipKind } from '../loader/topology-kind.js';
import { resetSlabs } from '../tile/slab.js';
import { pathToFileURL } from 'node:url';
import { AbortError, DeadlockError, KernbenchError, serializeError } from '../errors.js';
import { ABORT_KIND, ACTOR_STATE, HEADER } from '../shm/layout.js';
import { FaultOwner } from '../sync/fault-owner.js';
import { abortSession } from '../sync/wake.js';
import { installFaultHandlers, setFaultSession } from './faults.js';
import { SharedState } from '../shm/shared-state.js';
import { HostRuntime } from '../host/host-runtime.js';
import { movableBuffers } from '../host/moved-arrays.js';
import { RankPosts } from './rank-posts.js';
import { Torch } from '../host/torch.js';
import { CommandReader } from '../pe/commands.js';
import { unreachable, type ExecutorInit, type ExecutorReport, type FromExecutor, type ToExecutor } from '../sync/messages.js';
import { PeRuntime } from '../pe/pe-runtime.js';
import { ThreadEnv } from '../sync/thread-env.js';
import { configureYoungGc, youngCollections } from '../sync/young-gc.js';
import { raceLog } from '../race/log.js';

installFaultHandlers();

export async function runExecutor(init: ExecutorInit): Promise<ExecutorReport> {
  // Kernels of an earlier session on this thread are over (or abandoned): tile memory starts afresh.
  resetSlabs();
  configureYoungGc(init.epochGc);
  raceLog.reset(init.plan.checkRaces);
  const shared = SharedState.attach(init.dims, init.buffers);
  await ensureSipKind(init.plan.topology); // a user's kind module, named by path (decision 0050)
  const env = new ThreadEnv(init.plan, shared, init.executor);
  setFaultSession({ shared, executor: init.executor });
  const pes = new Map<number, PeRuntime>();
  init.plan.peExecutor.forEach((e, pe) => {
    if (e === init.executor) pes.set(pe, new PeRuntime(env, pe));
  });
  const port = init.port;
  const post = (m: FromExecutor, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);
  const ranks: Promise<void>[] = [];
  const posts = new RankPosts(post, (rank, e) => {
    // The value could not be cloned across threads: report that as the rank's failure.
    Atomics.add(shared.ctl, HEADER.RANKS_FAILED, 1);
    post({ type: 'rank-failed', rank, error: serializeError(e) });
  });

  let ended!: () => void;
  const end = new Promise<void>((r) => (ended = r));

  port.on('message', (m: ToExecutor) => {
    switch (m.type) {
      case 'spawn-rank':
        posts.started();
        ranks.push(runRank(env, m, posts));
        break;
      case 'end':
        ended();
        break;
      default:
        unreachable(m);
    }
  });

  const serving = serve(env, pes);
  // A broken command queue is kernbench's own failure: the run must fail, not wait for launches that never come.
  serving.catch((e: unknown) => abortSession(shared, ABORT_KIND.FAULT, serializeError(new KernbenchError('ERR_INTERNAL', `executor ${init.executor} stopped serving launches: ${String(e)}`, { cause: e }))));
  post({ type: 'ready', executor: init.executor });
  await end;
  env.sched.stop(new AbortError('session ended'));
  await serving;
  await Promise.allSettled(ranks);
  setFaultSession(undefined);
  port.close();
  return { executor: init.executor, messages: env.stats.messages, linkPieces: env.stats.linkPieces, epochGcs: youngCollections(), trace: env.trace?.data ?? null, races: raceLog.on ? raceLog.take() : null };
}

/** Hand each launch command to its PE, in queue order. Ends when the session ends or aborts. */
async function serve(env: ThreadEnv, pes: Map<number, PeRuntime>): Promise<void> {
  const reader = new CommandReader(env.shared, env.sched, env.executor);
  for (;;) {
    let next;
    try {
      next = await reader.next();
    } catch (e) {
      if (e instanceof AbortError || e instanceof DeadlockError) return; // session ended or aborted: no more commands are served
      throw e;
    }
    const pe = pes.get(next.cmd.pe);
    if (!pe) throw new KernbenchError('ERR_INTERNAL', `launch for PE ${next.cmd.pe} reached executor ${env.executor}, which does not run it`);
    pe.accept(next.cmd);
    next.commit();
  }
}

async function runRank(env: ThreadEnv, m: Extract<ToExecutor, { type: 'spawn-rank' }>, posts: RankPosts): Promise<void> {
  const host = new HostRuntime(env, m.rank, m.barrierBase);
  host.clock.advanceTo(m.startPs); // a rank starts when it is spawned, in virtual time too
  host.spawnRanks = m.nprocs; // which PEs are whose during the spawn (HostRuntime.orderedOnto)
  if (raceLog.on) {
    // The same name main gave this rank's host when it spawned it (lib/race/log.ts).
    host.raceActor = raceLog.spawnRank(m.rank);
    raceLog.acquire(host.raceActor, [`S:${host.raceActor}`]);
  }
  const torch = new Torch(host, { rank: m.rank, nprocs: m.nprocs }, null);
  env.sched.setState(host.actor, ACTOR_STATE.RUNNING);
  // Everything the rank's code schedules (timers, promise continuations) belongs to this owner (./faults.ts).
  const owner = new FaultOwner(`rank ${m.rank}`, () => host.clockPs);
  let outcome: FromExecutor;
  try {
    const value = await owner.run(async () => {
      const url = m.module.startsWith('file:') ? m.module : pathToFileURL(m.module).href;
      const mod = await importModule(url);
      const fn = mod[m.exportName];
      if (typeof fn !== 'function') throw new KernbenchError('ERR_NOT_EXPORTED', `spawn: '${m.exportName}' is not a function exported by ${m.module}, got ${typeof fn}`);
      const v: unknown = await owner.callAs(() => (fn as (...a: unknown[]) => unknown)(m.rank, ...m.args, torch));
      // The rank ends once the timers it started have run, as a Node process does: a throw in
      // one fails this rank, in this spawn, however late it fires (decision 0096).
      await owner.timersDone();
      await host.synchronize();
      return v;
    });
    outcome = { type: 'rank-done', rank: m.rank, value, clockPs: host.clockPs };
  } catch (e) {
    // A deadlock's report reaches main through the report slot, once: not a copy per rank
    // (at a thousand ranks that was a thousand copies of hundreds of KB, issue 23 item 4).
    outcome = { type: 'rank-failed', rank: m.rank, error: serializeError(e instanceof DeadlockError ? new AbortError('deadlock (the report is the spawn\'s error)') : e) };
    // A rank that failed on its own is a root cause; the coordinator aborts the others
    // only once nothing else can happen (docs/decisions/0015-root-causes-at-quiescence.md).
    if (!(e instanceof AbortError) && !(e instanceof DeadlockError)) Atomics.add(env.shared.ctl, HEADER.RANKS_FAILED, 1);
  }
  if (raceLog.on) raceLog.release(host.raceActor, [`J:${host.raceActor}`]);
  // Count the rank settled before it stops being RUNNING: the deadlock detector
  // takes an actor that is not RUNNING to publish nothing more, so with the other
  // order a pass between the two saw every rank DONE, main waiting for one more
  // settled rank, and reported a deadlock (seen once in CI, on the first spawn).
  Atomics.add(env.shared.ctl, HEADER.RANKS_SETTLED, 1);
  env.sched.setState(host.actor, ACTOR_STATE.DONE);
  // A faulted rank's code may still be running (parked in a wait, or about to be):
  // abort now, so that it unwinds instead of acting as a rank that has settled.
  if (owner.faulted) abortSession(env.shared, ABORT_KIND.FAULT, serializeError(owner.faulted));
  // The rank's numpy() results move to main rather than being copied (../host/moved-arrays.ts), once no rank runs here (./rank-posts.ts).
  posts.settled(outcome, outcome.type === 'rank-done' ? movableBuffers(outcome.value) : []);
}

// Runs on: an executor thread (a piscina worker), for one session. Owns: the
// PEs placed on this thread and the spawned ranks whose host code runs here;
// serves this thread's command queue (kernel launches from any host) and its
// port (spawn and teardown from main).
//
// Start-up handshake: attach to the session's buffers, create the PEs, post
// `ready`. The task resolves with an ExecutorReport when main posts `end`.
import { importModule } from '../loader/user-module.js';
import { resetSlabs } from '../tile/slab.js';
import { pathToFileURL } from 'node:url';
import { serializeError } from '../errors.js';
import { ACTOR_STATE, HEADER } from '../shm/layout.js';
import { SharedState } from '../shm/shared-state.js';
import { HostRuntime } from '../host/host-runtime.js';
import { Torch } from '../host/torch.js';
import { CommandReader } from '../pe/commands.js';
import { unreachable, type ExecutorInit, type ExecutorReport, type FromExecutor, type ToExecutor } from '../sync/messages.js';
import { PeRuntime } from '../pe/pe-runtime.js';
import { ThreadEnv } from '../sync/thread-env.js';
import { configureYoungGc, youngCollections } from '../sync/young-gc.js';

export async function runExecutor(init: ExecutorInit): Promise<ExecutorReport> {
  // Kernels of an earlier session on this thread are over (or abandoned): tile memory starts afresh.
  resetSlabs();
  configureYoungGc(init.epochGc);
  const shared = SharedState.attach(init.dims, init.buffers);
  const env = new ThreadEnv(init.plan, shared, init.executor);
  const pes = new Map<number, PeRuntime>();
  init.plan.peExecutor.forEach((e, pe) => {
    if (e === init.executor) pes.set(pe, new PeRuntime(env, pe));
  });
  const port = init.port;
  const post = (m: FromExecutor): void => port.postMessage(m);
  const ranks: Promise<void>[] = [];

  let ended!: () => void;
  const end = new Promise<void>((r) => (ended = r));

  port.on('message', (m: ToExecutor) => {
    switch (m.type) {
      case 'spawn-rank':
        ranks.push(runRank(env, m, post));
        break;
      case 'end':
        ended();
        break;
      default:
        unreachable(m);
    }
  });

  const serving = serve(env, pes);
  post({ type: 'ready', executor: init.executor });
  await end;
  env.sched.stop(new Error('session ended'));
  await serving;
  await Promise.allSettled(ranks);
  port.close();
  return { executor: init.executor, messages: env.stats.messages, epochGcs: youngCollections(), trace: env.trace?.data ?? null };
}

/** Hand each launch command to its PE, in queue order. Ends when the session ends or aborts. */
async function serve(env: ThreadEnv, pes: Map<number, PeRuntime>): Promise<void> {
  const reader = new CommandReader(env.shared, env.sched, env.executor);
  for (;;) {
    let next;
    try {
      next = await reader.next();
    } catch {
      return; // session ended or aborted: no more commands are served
    }
    const pe = pes.get(next.cmd.pe);
    if (!pe) throw new Error(`internal: launch for PE ${next.cmd.pe} reached executor ${env.executor}, which does not run it`);
    pe.accept(next.cmd);
    next.commit();
  }
}

async function runRank(env: ThreadEnv, m: Extract<ToExecutor, { type: 'spawn-rank' }>, post: (m: FromExecutor) => void): Promise<void> {
  const host = new HostRuntime(env, m.rank, m.barrierBase);
  host.clock.advanceTo(m.startPs); // a rank starts when it is spawned, in virtual time too
  const torch = new Torch(host, { rank: m.rank, nprocs: m.nprocs }, null);
  env.sched.setState(host.actor, ACTOR_STATE.RUNNING);
  let outcome: FromExecutor;
  try {
    const url = m.module.startsWith('file:') ? m.module : pathToFileURL(m.module).href;
    const mod = await importModule(url);
    const fn = mod[m.exportName];
    if (typeof fn !== 'function') throw new TypeError(`spawn: '${m.exportName}' is not a function exported by ${m.module}, got ${typeof fn}`);
    const value: unknown = await (fn as (...a: unknown[]) => unknown)(m.rank, ...m.args, torch);
    await host.synchronize();
    outcome = { type: 'rank-done', rank: m.rank, value, clockPs: host.clockPs };
  } catch (e) {
    outcome = { type: 'rank-failed', rank: m.rank, error: serializeError(e) };
  }
  // Count the rank settled before it stops being RUNNING: the deadlock detector
  // takes an actor that is not RUNNING to publish nothing more, so with the other
  // order a pass between the two saw every rank DONE, main waiting for one more
  // settled rank, and reported a deadlock (seen once in CI, on the first spawn).
  Atomics.add(env.shared.ctl, HEADER.RANKS_SETTLED, 1);
  env.sched.setState(host.actor, ACTOR_STATE.DONE);
  try {
    post(outcome);
  } catch (e) {
    // The value could not be cloned across threads: report that as the rank's failure.
    post({ type: 'rank-failed', rank: m.rank, error: serializeError(e) });
  }
}

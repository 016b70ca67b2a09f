// Runs on: main thread (tap), with the coordinator's worker script in a thread of
// its own, driven through shared memory as executors drive it. Covers: a
// coordinator that throws while it serves a session aborts that session with the
// error as its report (lib/coordinator/coordinator-worker.ts, fail), so every
// waiter ends and the run fails with the error. Before, it only told main, which
// read the message at the session's end: the actors waiting for a grant or a link
// flow waited for passes that never came, a silent stall (CI caught one).
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { ABORT_KIND, FLOW, HEADER, PE } from '../lib/shm/layout.js';
import type { FromCoordinator, ToCoordinator } from '../lib/sync/messages.js';
import { ringCoordinator } from '../lib/sync/wake.js';
import { askFlow, coordinatorSession, COORDINATOR } from './helpers/coordinator-session.js';

t.test('a coordinator that throws mid-session aborts the session with its error as the report', async (t) => {
  const { plan, machine, sh } = coordinatorSession(['system.sips.count=2', 'timing.link_sharing=max_min']);
  t.not(plan.links, 'none', 'the session has a link arbiter');
  const L = sh.layout;
  const peer = machine.peId({ sip: 1, cube: 0, pe: 0 });

  const coordinator = new Worker(COORDINATOR);
  t.teardown(() => coordinator.terminate());
  const answer = new Promise<FromCoordinator>((resolve) => coordinator.once('message', resolve));
  coordinator.postMessage({ type: 'session', plan, buffers: sh.buffers, timerMs: 5 } satisfies ToCoordinator);

  // Outbound channel (PE 0, east) asks for a link flow, and rings.
  const request = (startPs: number): void => {
    askFlow(sh, peer, startPs);
    ringCoordinator(sh.ctl);
  };
  request(10_000);
  // No actor is active, so the first pass makes it final (it wakes the channel's thread by its doorbell: polled here).
  while (Atomics.load(sh.ctl, L.pe(0, PE.FLOW_DONE)) === 0) await new Promise((r) => setTimeout(r, 2));
  t.equal(sh.times[L.flow(0, 0, FLOW.SENT_PS)], 11_000, 'it left its channel after its start and serialisation');
  // A flow that joins before what the arbiter already made final breaks its contract: it throws.
  request(0);
  const m2 = await answer;
  t.equal(m2.type, 'fatal', 'main is told');
  t.equal(m2.type === 'fatal' ? m2.error.code : undefined, 'ERR_INTERNAL');
  t.equal(Atomics.load(sh.ctl, HEADER.ABORT_KIND), ABORT_KIND.FAULT, 'the session is aborted as by a fault');
  t.equal(Atomics.load(sh.ctl, HEADER.ABORT), 1, 'every thread is woken to end');
  t.equal(sh.readErrorSlot(-1)?.error.code, 'ERR_INTERNAL', 'the report is the error the coordinator threw');
  coordinator.postMessage({ type: 'shutdown' } satisfies ToCoordinator);
});

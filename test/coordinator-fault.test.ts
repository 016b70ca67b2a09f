// Runs on: main thread (tap), with the coordinator's worker script in a thread of
// its own, driven through shared memory as executors drive it. Covers: a
// coordinator that throws while it serves a session aborts that session with the
// error as its report (lib/coordinator/coordinator-worker.ts, fail), so every
// waiter ends and the run fails with the error. Before, it only told main, which
// read the message at the session's end: the actors waiting for a grant or a link
// flow waited for passes that never came, a silent stall (CI caught one).
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { loadCcl, loadTopology } from '../lib/config/load.js';
import { DEFAULT_CCL_FILE, topologyPath } from '../lib/config/paths.js';
import { buildPlan } from '../lib/config/plan.js';
import { ABORT_KIND, FLOW, HEADER, PE } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import type { FromCoordinator, ToCoordinator } from '../lib/sync/messages.js';
import { ringCoordinator } from '../lib/sync/wake.js';
import { Machine } from '../lib/topology/machine.js';

const COORDINATOR = new URL('../lib/coordinator/coordinator-worker.js', import.meta.url);

t.test('a coordinator that throws mid-session aborts the session with its error as the report', async (t) => {
  const topology = loadTopology(topologyPath('ideal'), ['system.sips.count=2', 'timing.link_sharing=max_min']);
  const ccl = { ...loadCcl(DEFAULT_CCL_FILE), module_url: '' };
  const plan = buildPlan({ topologyName: 'ideal', topology, ccl, threads: 1, jitterSeed: null, noData: true });
  t.not(plan.links, 'none', 'the session has a link arbiter');
  const sh = SharedState.create(plan.dims);
  const L = sh.layout;
  const m = new Machine(topology);
  const peer = m.peId({ sip: 1, cube: 0, pe: 0 });

  const coordinator = new Worker(COORDINATOR);
  t.teardown(() => coordinator.terminate());
  const answer = new Promise<FromCoordinator>((resolve) => coordinator.once('message', resolve));
  coordinator.postMessage({ type: 'session', plan, buffers: sh.buffers, timerMs: 5 } satisfies ToCoordinator);

  // Outbound channel (PE 0, east) asks for a link flow, as ArbitratedLinks.cross does.
  const request = (startPs: number): void => {
    sh.times[L.flow(0, 0, FLOW.START_PS)] = startPs;
    sh.times[L.flow(0, 0, FLOW.SERIAL_PS)] = 1000;
    sh.times[L.flow(0, 0, FLOW.PEER)] = peer;
    sh.times[L.flow(0, 0, FLOW.LATENCY_PS)] = 100;
    sh.times[L.flow(0, 0, FLOW.JOIN_MIN_PS)] = 0;
    Atomics.add(sh.ctl, HEADER.FLOWS_PENDING, 1);
    Atomics.add(sh.ctl, L.pe(0, PE.FLOW_REQ), 1);
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

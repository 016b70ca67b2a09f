// Runs on: main thread (tap), and the coordinator's worker script in a thread of its
// own, driven through shared memory as executors drive it. Covers: the coordinator's
// doorbell loses no ring (lib/sync/wake.ts, CoordinatorDoorbell), not even one rung
// before the coordinator attached to the session. Executors start kernels as their
// launches arrive, so a kernel can ask for a memory grant, find it held back and ring
// before the coordinator has read the session's message. The coordinator took the
// doorbell's value as it began as seen, so that grant waited for its timer: 20 ms in
// a run, 5 s in test/memory-channels.test.ts, whose unrung-grant assertion caught it
// now and then (unrungGrants 1).
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { loadCcl, loadTopology } from '../lib/config/load.js';
import { DEFAULT_CCL_FILE, topologyPath } from '../lib/config/paths.js';
import { buildPlan } from '../lib/config/plan.js';
import { ACTOR_STATE, GRANT, HEADER, PE, WAIT_KIND } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import type { FromCoordinator, ToCoordinator } from '../lib/sync/messages.js';
import { Scheduler } from '../lib/sync/scheduler.js';
import { CoordinatorDoorbell, ringCoordinator } from '../lib/sync/wake.js';

const COORDINATOR = new URL('../lib/coordinator/coordinator-worker.js', import.meta.url);

t.test('a ring before the coordinator first waits is not taken as seen; later waits return on a ring or time out', async (t) => {
  const ctl = new Int32Array(new SharedArrayBuffer(HEADER.COORD_DOORBELL * 4 + 64));
  ringCoordinator(ctl);
  const doorbell = new CoordinatorDoorbell(ctl);
  t.equal(doorbell.wait(5_000), true, 'the ring before the first wait brings a pass');
  t.equal(doorbell.wait(1), false, 'no ring since: the wait times out');
  ringCoordinator(ctl);
  t.equal(doorbell.wait(5_000), true, 'a ring between waits brings a pass');
});

t.test('a grant asked for and rung before the coordinator attaches is made by a rung pass, not by its timer', async (t) => {
  const topology = loadTopology(topologyPath('ideal'), ['system.sips.count=1']);
  const ccl = { ...loadCcl(DEFAULT_CCL_FILE), module_url: '' };
  const plan = buildPlan({ topologyName: 'ideal', topology, ccl, threads: 1, jitterSeed: null, noData: true });
  const sh = SharedState.create(plan.dims);
  const L = sh.layout;
  // PE 0's kernel asks for an HBM access at 1000 ps and blocks on its grant (lib/kernel/memory-port.ts), then rings.
  sh.times[L.grant(0, GRANT.AT_PS)] = 1000;
  sh.times[L.grant(0, GRANT.BYTES)] = 256;
  sh.times[L.grant(0, GRANT.SPACE)] = 1;
  sh.times[L.grant(0, GRANT.CUBE)] = 0;
  Atomics.add(sh.ctl, HEADER.GRANTS_PENDING, 1);
  const n = Atomics.add(sh.ctl, L.pe(0, PE.REQ_SEQ), 1) + 1;
  const sched = new Scheduler(sh, 0, false, null);
  sched.setState(L.peActor(0), ACTOR_STATE.RUNNING);
  sched.block(L.peActor(0), L.pe(0, PE.GRANT_SEQ), n, WAIT_KIND.GRANT, 0, 1000);
  t.ok(Atomics.load(sh.ctl, HEADER.COORD_DOORBELL) > 0, 'blocking with a request pending rang the coordinator');

  // Only now does the coordinator get the session; its timer (a minute) would be the only other pass.
  const coordinator = new Worker(COORDINATOR);
  t.teardown(() => coordinator.terminate());
  const done = new Promise<FromCoordinator>((resolve) => coordinator.once('message', resolve));
  coordinator.postMessage({ type: 'session', plan, buffers: sh.buffers, timerMs: 60_000 } satisfies ToCoordinator);
  // Polled for at most 20 s of wall time, so that without a pass the test fails rather than hangs.
  for (let i = 0; i < 2_000 && Atomics.load(sh.ctl, L.pe(0, PE.GRANT_SEQ)) < n; i++) await new Promise((r) => setTimeout(r, 10));
  t.equal(Atomics.load(sh.ctl, L.pe(0, PE.GRANT_SEQ)), n, 'the request is granted');

  Atomics.store(sh.ctl, HEADER.SESSION_END, 1);
  ringCoordinator(sh.ctl);
  const m = await done;
  t.equal(m.type === 'session-done' ? m.unrungGrants : m.type, 0, 'by a pass something rang');
  coordinator.postMessage({ type: 'shutdown' } satisfies ToCoordinator);
});

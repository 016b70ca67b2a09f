// Runs on: main thread (tap), and the coordinator's worker script in a thread of its
// own, driven through shared memory as executors drive it. Covers: the coordinator's
// doorbell loses no ring (lib/sync/wake.ts, CoordinatorDoorbell), not even one rung
// before the coordinator attached to the session. Executors start kernels as their
// launches arrive, so a kernel can ask for a memory grant, find it held back and ring
// before the coordinator has read the session's message. The coordinator took the
// doorbell's value as it began as seen, so that grant waited for its timer: 20 ms in
// a run, 5 s in test/memory-channels.test.ts, whose unrung-grant assertion caught it
// now and then (unrungGrants 1). Nor does a pass the coordinator owes itself: a link
// flow it made final may let a memory request be granted, and nobody rings for that.
import { Worker } from 'node:worker_threads';
import t from 'tap';
import type { SessionPlan } from '../lib/config/plan.js';
import { ACTOR_STATE, GRANT, HEADER, PE, WAIT_KIND } from '../lib/shm/layout.js';
import type { SharedState } from '../lib/shm/shared-state.js';
import type { FromCoordinator, ToCoordinator } from '../lib/sync/messages.js';
import { Scheduler } from '../lib/sync/scheduler.js';
import { CoordinatorDoorbell, ringCoordinator } from '../lib/sync/wake.js';
import { askFlow, coordinatorSession, COORDINATOR } from './helpers/coordinator-session.js';

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
  const { plan, sh } = coordinatorSession(['system.sips.count=1']);
  const n = askAndBlock(sh, 0, 1000);
  t.ok(Atomics.load(sh.ctl, HEADER.COORD_DOORBELL) > 0, 'blocking with a request pending rang the coordinator');
  // Only now does the coordinator get the session.
  const r = await serve(plan, sh, 0, n);
  t.equal(r.granted, n, 'the request is granted');
  t.equal(r.unrungGrants, 0, 'by a pass something rang');
});

t.test('a grant that a link flow made final in the same pass allows is made by that pass, not at the timer', async (t) => {
  // The memory arbiter holds a request back while link flows are pending and the link bound is not past it
  // (lib/coordinator/arbiter.ts); the link arbiter passes after it, in the same coordinator pass.
  const { plan, machine, sh } = coordinatorSession(['system.sips.count=2', 'timing.link_sharing=max_min']);
  t.not(plan.links, 'none', 'the session has a link arbiter');
  const L = sh.layout;
  // PE 0's east channel asks for a link flow from 10 000 ps (its actor idle: no bound).
  askFlow(sh, machine.peId({ sip: 1, cube: 0, pe: 0 }), 10_000);
  // PE 1 asks for memory at 20 000 ps: after the flow ends, but the link bound (0) is not past it yet.
  const n = askAndBlock(sh, 1, 20_000);
  const r = await serve(plan, sh, 1, n);
  t.equal(Atomics.load(sh.ctl, L.pe(0, PE.FLOW_DONE)), 1, 'the flow is made final');
  t.equal(r.granted, n, 'the request is granted');
  t.equal(r.unrungGrants, 0, 'by a pass something rang');
});

/** PE `pe`'s kernel asks for an HBM access at `atPs` and blocks on its grant (lib/kernel/memory-port.ts), which rings the coordinator: the request's number. */
function askAndBlock(sh: SharedState, pe: number, atPs: number): number {
  const L = sh.layout;
  sh.times[L.grant(pe, GRANT.AT_PS)] = atPs;
  sh.times[L.grant(pe, GRANT.BYTES)] = 256;
  sh.times[L.grant(pe, GRANT.SPACE)] = 1;
  sh.times[L.grant(pe, GRANT.CUBE)] = 0;
  Atomics.add(sh.ctl, HEADER.GRANTS_PENDING, 1);
  const n = Atomics.add(sh.ctl, L.pe(pe, PE.REQ_SEQ), 1) + 1;
  const sched = new Scheduler(sh, 0, false, null);
  sched.setState(L.peActor(pe), ACTOR_STATE.RUNNING);
  sched.block(L.peActor(pe), L.pe(pe, PE.GRANT_SEQ), n, WAIT_KIND.GRANT, 0, atPs);
  return n;
}

/**
 * Start a coordinator on the session (its timer a minute: the only pass nobody rings),
 * wait for PE `pe`'s grant `n` (at most 20 s of wall time, so that without a pass the
 * test fails rather than hangs), end the session: PE `pe`'s GRANT_SEQ and the report's unrung grants.
 */
async function serve(plan: SessionPlan, sh: SharedState, pe: number, n: number): Promise<{ granted: number; unrungGrants: number | string }> {
  const L = sh.layout;
  const coordinator = new Worker(COORDINATOR);
  try {
    const done = new Promise<FromCoordinator>((resolve) => coordinator.once('message', resolve));
    coordinator.postMessage({ type: 'session', plan, buffers: sh.buffers, timerMs: 60_000 } satisfies ToCoordinator);
    for (let i = 0; i < 2_000 && Atomics.load(sh.ctl, L.pe(pe, PE.GRANT_SEQ)) < n; i++) await new Promise((r) => setTimeout(r, 10));
    const granted = Atomics.load(sh.ctl, L.pe(pe, PE.GRANT_SEQ));
    Atomics.store(sh.ctl, HEADER.SESSION_END, 1);
    ringCoordinator(sh.ctl);
    const m = await done;
    coordinator.postMessage({ type: 'shutdown' } satisfies ToCoordinator);
    return { granted, unrungGrants: m.type === 'session-done' ? m.unrungGrants : m.type };
  } finally {
    await coordinator.terminate();
  }
}

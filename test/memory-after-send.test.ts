// Runs on: main thread (tap); the second test's sessions on real threads. Covers: a
// memory access right after a wait for a send the link arbiter times (decision 0204).
// The sender resumes at the send's last byte X,
// its route's latency before the arrival the link model must reach to make the flow
// final. Another PE of its cube asking its HBM at t in (X, arrival) was granted while the
// flow was pending: the link model stopped at t (that PE bounded it by its request
// time), and the memory arbiter took the pending sender as resuming no earlier than the
// model's safe time. The sender's own access at X then queued behind the one at t. A PE
// waiting for a grant now bounds the link model by its access's earliest completion, so
// the flow is made final first and the access at X is served first. Both arbiters are
// driven through shared memory as their threads drive them, with no threads; then a user
// program (./fixtures/memory-after-send.ts) must get the fast path's times when arbitrated.
import t from 'tap';
import { loadCcl, loadTopology } from '../lib/config/load.js';
import { DEFAULT_CCL_FILE, topologyPath } from '../lib/config/paths.js';
import { buildPlan } from '../lib/config/plan.js';
import { Arbiter } from '../lib/coordinator/arbiter.js';
import { LinkArbiter } from '../lib/coordinator/link-arbiter.js';
import { ACTOR, ACTOR_STATE, DIR_COUNT, FLOW, GRANT, HEADER, PE } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { CostModel } from '../lib/topology/cost-model.js';
import { Machine } from '../lib/topology/machine.js';
import { markActive } from '../lib/shm/active-actors.js';
import { markFlowRequest } from '../lib/shm/flow-requests.js';
import { TestRuntime } from './helpers/run.js';
import { memoryAfterSendRank } from './fixtures/memory-after-send.js';

/** Bytes of each HBM access: its channel stays busy past the later request. */
const BYTES = 65_536;

/** Publish actor `a` as BLOCKED on ctl[word] >= target at `clockPs`, as the scheduler does. */
function block(sh: SharedState, a: number, clockPs: number, word: number, target: number): void {
  const L = sh.layout;
  sh.times[L.clock(a)] = clockPs;
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_WORD), word);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_TARGET), target);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.STATE), ACTOR_STATE.BLOCKED);
  markActive(sh.ctl, L, a, true);
}

t.test('an HBM access at t after an arbitrated send\'s last byte X < t waits for the sender\'s own access at X', async (t) => {
  const topology = loadTopology(topologyPath('default'), ['timing.link_sharing=max_min']);
  const ccl = { ...loadCcl(DEFAULT_CCL_FILE), module_url: '' };
  const plan = buildPlan({ topologyName: 'default', topology, ccl, threads: 1, jitterSeed: null, noData: true });
  const sh = SharedState.create(plan.dims);
  const L = sh.layout;
  const m = new Machine(topology);
  const costs = new CostModel(m);
  const links = new LinkArbiter(sh, m);
  const memory = Arbiter.of(sh, m);
  // The sender (cube 0, PE 0) sends one piece to the next cube of its SIP; the other PE of cube 0 asks its HBM.
  const sender = m.peId({ sip: 0, cube: 0, pe: 0 });
  const other = m.peId({ sip: 0, cube: 0, pe: 1 });
  const receiver = m.peId({ sip: 0, cube: 1, pe: 0 });
  const hbmCube = 0;
  const dir = 0;
  const flightPs = costs.flightPs(sender, receiver);
  const startPs = 10_000;
  const serialPs = 1_000;
  const lastBytePs = startPs + serialPs;
  const arrivalPs = lastBytePs + flightPs;
  const otherAtPs = lastBytePs + Math.floor(flightPs / 2);
  t.ok(lastBytePs < otherAtPs && otherAtPs < arrivalPs, `the other PE asks at ${otherAtPs} ps, after the last byte (${lastBytePs}) and before the arrival (${arrivalPs})`);
  t.ok(otherAtPs + costs.memoryPs('hbm', BYTES) >= arrivalPs, 'the arrival comes before that access could complete (an on-package route)');

  // The sender's channel publishes its flow and waits for FLOW_DONE; its kernel waits for the channel (a false condition).
  sh.times[L.flow(sender, dir, FLOW.START_PS)] = startPs;
  sh.times[L.flow(sender, dir, FLOW.SERIAL_PS)] = serialPs;
  sh.times[L.flow(sender, dir, FLOW.PEER)] = receiver;
  sh.times[L.flow(sender, dir, FLOW.LATENCY_PS)] = flightPs;
  sh.times[L.flow(sender, dir, FLOW.JOIN_MIN_PS)] = 0;
  Atomics.add(sh.ctl, HEADER.FLOWS_PENDING, 1);
  Atomics.add(sh.ctl, L.pe(sender, PE.FLOW_REQ + dir), 1);
  markFlowRequest(sh.ctl, L, sender * DIR_COUNT + dir);
  block(sh, L.channelActor(sender, dir), startPs, L.pe(sender, PE.FLOW_DONE + dir), 1);
  block(sh, L.peActor(sender), startPs, L.pe(sender, PE.DONE_SEQ), 1);
  // The other PE asks its cube's HBM at otherAtPs and waits for the grant.
  const ask = (pe: number, atPs: number): void => {
    sh.times[L.grant(pe, GRANT.AT_PS)] = atPs;
    sh.times[L.grant(pe, GRANT.BYTES)] = BYTES;
    sh.times[L.grant(pe, GRANT.SPACE)] = 1;
    sh.times[L.grant(pe, GRANT.CUBE)] = hbmCube;
    Atomics.add(sh.ctl, HEADER.GRANTS_PENDING, 1);
    const n = Atomics.add(sh.ctl, L.pe(pe, PE.REQ_SEQ), 1) + 1;
    block(sh, L.peActor(pe), atPs, L.pe(pe, PE.GRANT_SEQ), n);
  };
  ask(other, otherAtPs);

  // The coordinator's pass: links first, then memory (either order must give the same grants).
  const woke = links.pass();
  const granted = memory.pass();
  t.same(woke, [sender * DIR_COUNT + dir], 'the flow is made final while the other PE waits');
  t.equal(sh.times[L.flow(sender, dir, FLOW.SENT_PS)], lastBytePs, 'its sender resumes at the last byte');
  t.same(granted, [], 'the access at t is not granted while the sender can still ask at X < t');

  // The sender resumes at X and asks the same HBM.
  Atomics.store(sh.ctl, L.actor(L.channelActor(sender, dir), ACTOR.STATE), ACTOR_STATE.DONE);
  markActive(sh.ctl, L, L.channelActor(sender, dir), false);
  ask(sender, lastBytePs);
  t.same(memory.pass(), [sender, other], 'the access at X is granted first, then the one at t');
  const senderDone = sh.times[L.grant(sender, GRANT.DONE_PS)];
  t.equal(senderDone, lastBytePs + costs.memoryPs('hbm', BYTES), 'the sender\'s access finds the channel free');
  t.ok(sh.times[L.grant(other, GRANT.DONE_PS)] > otherAtPs + costs.memoryPs('hbm', BYTES), 'the later access queues behind it');
});

const user = new TestRuntime({ modules: [new URL('./fixtures/memory-after-send.js', import.meta.url).href] });
t.teardown(() => user.close());

t.test('a user program: a load after an arbitrated send, another PE\'s load between its last byte and its arrival: the fast path\'s times in every layout', async (t) => {
  const go = async (delay: number, fast: boolean, threads: 1 | 'rank' | 'pe', jitterSeed: number | null = null) => {
    const run = await user.session({ topology: 'default', threads, jitterSeed, sets: ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1', 'timing.link_sharing=max_min', `timing.link_fast_path=${fast}`] }, (torch) =>
      torch.multiprocessing.spawn(memoryAfterSendRank, { args: [4096, delay], nprocs: 2 }),
    );
    return run.value[0];
  };
  // PE 1 then asks HBM about 5 436 ns in: after the sender's last byte (4 768 ns), 32 ns before its arrival.
  const delay = 8150;
  const ref = await go(delay, true, 1);
  for (const [threads, jitter] of [
    [1, null],
    ['rank', null],
    ['pe', null],
    [1, 3],
    ['rank', 5],
  ] as const) {
    const r = await go(delay, false, threads, jitter);
    t.same(r, ref, `--threads ${threads}${jitter === null ? '' : `, jitter ${jitter}`}: arbitrated, the fast path's times (sender ${ref.senderNs} ns, other ${ref.otherNs} ns)`);
  }
});

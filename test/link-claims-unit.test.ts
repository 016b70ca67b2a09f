// Runs on: main thread (tap), no threads. Covers: the two halves of the proof that a
// piece of a shared link is alone (lib/sync/link-claims.ts, decision 0100), on shared
// words set by hand: claims (a link another kernel's channel claims is not alone, and
// is again once that kernel drops its claims; a channel that remembers its route claimed
// alone reads the links again once a kernel begins to claim, decision 0276), and the launch horizon (an active PE
// bounds it by its clock and its sends' arrivals, a running host by its clock, a host
// waiting for a kernel not at all, a command in flight makes it -Infinity, and the
// highest horizon found is kept).
import { actorActive, publishClock, raisePeFloor } from '../lib/sync/pe-floor.js';
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { ACTOR, ACTOR_STATE, FLOW, HEADER, PE, RING, WAIT_KIND } from '../lib/shm/layout.js';
import { CostModel } from '../lib/topology/cost-model.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { Links } from '../lib/topology/links.js';
import { Machine } from '../lib/topology/machine.js';
import { CLAIMED, ClaimsSeen, claimLinks, claimedAlone, claimedBy, keptHorizon, launchHorizon, releaseLinks } from '../lib/sync/link-claims.js';
import { kernelEndBounds, kernelFlowNow } from '../lib/sync/end-bounds.js';
import { setOwnActors } from '../lib/sync/owned.js';
import { markActive } from '../lib/shm/active-actors.js';

const m = new Machine(loadTopology(topologyPath('default'), ['system.sips.count=8']));
const pe = (sip: number) => m.peId({ sip, cube: 0, pe: 0 });
const links = new Links(m);
const EAST = 0;

function fresh(): SharedState {
  return SharedState.create({ executors: 1, pes: m.totalPes, hosts: 9, nSlots: 2, slotSize: 64, cubes: m.sips * m.cubesPerSip, arenaBytes: 1024, links: links.count });
}

/** A port table whose east port sends to `to`. */
const sendsTo = (to: number) => ({ send: [{ pe: to, dir: 1 }, { code: 'ERR_NO_NEIGHBOUR' }, { code: 'ERR_NO_NEIGHBOUR' }, { code: 'ERR_NO_NEIGHBOUR' }] });
const noPeers = (): number => 0;

t.test('a link is alone for a channel while no other kernel\'s channel claims it', async (t) => {
  const sh = fresh();
  const near = links.route(pe(1), pe(2));
  const far = links.route(pe(0), pe(3));
  t.ok(far.includes(near[0]), 'SIP 0 to 3 crosses the link 1 -> 2');
  const a = claimLinks(sh, m, pe(1), sendsTo(pe(2)), noPeers);
  t.ok(claimedAlone(sh, near, pe(1), EAST), 'SIP 1\'s channel alone on 1 -> 2');
  t.notOk(claimedAlone(sh, near, pe(1), 1), 'not for another channel of the PE');
  const b = claimLinks(sh, m, pe(0), sendsTo(pe(3)), noPeers);
  t.notOk(claimedAlone(sh, near, pe(1), EAST), 'SIP 0\'s kernel claims 1 -> 2 too: not alone');
  t.notOk(claimedAlone(sh, far, pe(0), EAST), 'nor is SIP 0\'s route');
  releaseLinks(sh, b);
  t.ok(claimedAlone(sh, near, pe(1), EAST), 'alone again once SIP 0\'s kernel ended');
  releaseLinks(sh, a);
  const c = claimLinks(sh, m, pe(0), sendsTo(pe(3)), noPeers);
  t.ok(claimedAlone(sh, far, pe(0), EAST), 'a later kernel alone on the links claims them alone');
  releaseLinks(sh, c);
});

t.test('two channels of one kernel on one link are not alone on it', async (t) => {
  const sh = fresh();
  // A peer table (ccl.peer_ranks): every rank of the world, each on the ring of its distance.
  const world = [pe(0), pe(1), pe(2), pe(3)];
  claimLinks(sh, m, pe(0), { send: sendsTo(pe(1)).send, pes: world }, (k) => (k - 1) % 4);
  // Peers at distance 1 (east channel) and 3 (north channel, k - 1 = 2) both cross 0 -> 1.
  t.notOk(claimedAlone(sh, links.route(pe(0), pe(1)), pe(0), EAST), 'the link 0 -> 1, crossed by two channels of the kernel');
});

t.test('two channels of one kernel that alone claim a link: a piece on it is its own kernel\'s, until another kernel claims the link', async (t) => {
  const sh = fresh();
  // East and west of SIP 1 both to SIP 2 (a ring of two, as on the default machine): one route, claimed twice.
  const both = { send: [{ pe: pe(2), dir: 1 }, { pe: pe(2), dir: 0 }, { code: 'ERR_NO_NEIGHBOUR' }, { code: 'ERR_NO_NEIGHBOUR' }] };
  const route = links.route(pe(1), pe(2));
  const a = claimLinks(sh, m, pe(1), both, noPeers);
  t.equal(claimedBy(sh, route, pe(1), EAST), CLAIMED.OWN_KERNEL, 'the east piece: its kernel\'s two channels alone');
  t.equal(claimedBy(sh, route, pe(1), 1), CLAIMED.OWN_KERNEL, 'the west piece too');
  t.notOk(claimedAlone(sh, route, pe(1), EAST), 'not its channel\'s alone');
  t.equal(claimedBy(sh, route, pe(0), EAST), CLAIMED.OTHERS, 'nor another PE\'s');
  // Another kernel's single claim makes the count 3; dropped, the pair is alone again.
  const b = claimLinks(sh, m, pe(0), sendsTo(pe(3)), noPeers);
  t.equal(claimedBy(sh, route, pe(1), EAST), CLAIMED.OTHERS, 'SIP 0\'s kernel crosses the link too: others');
  releaseLinks(sh, a);
  // A single claim of SIP 1's east channel and SIP 0's: count 2, but not the pair (the sum tells).
  const c = claimLinks(sh, m, pe(1), sendsTo(pe(2)), noPeers);
  t.equal(claimedBy(sh, route, pe(1), EAST), CLAIMED.OTHERS, 'two single claims of two kernels are not a pair');
  releaseLinks(sh, b);
  t.equal(claimedBy(sh, route, pe(1), EAST), CLAIMED.ALONE, 'its channel alone once SIP 0\'s kernel ended');
  releaseLinks(sh, c);
});

t.test('a channel that has seen its route claimed alone reads the links again only once a kernel begins to claim', async (t) => {
  const sh = fresh();
  const near = links.route(pe(1), pe(2));
  const far = links.route(pe(0), pe(3));
  const seen = new ClaimsSeen();
  const a = claimLinks(sh, m, pe(1), sendsTo(pe(2)), noPeers);
  for (let i = 0; i < 5; i++) t.ok(seen.alone(sh, near, pe(1), EAST), `piece ${i}: alone`);
  t.equal(seen.linkReads, 1, 'five pieces, the links read for the first only');
  // A kernel with nothing to send claims nothing and changes nothing.
  claimLinks(sh, m, pe(5), { send: [] }, noPeers);
  t.ok(seen.alone(sh, near, pe(1), EAST), 'alone after a kernel that claims nothing');
  t.equal(seen.linkReads, 1, 'and not read again');
  const b = claimLinks(sh, m, pe(0), sendsTo(pe(3)), noPeers);
  t.notOk(seen.alone(sh, near, pe(1), EAST), "SIP 0's kernel claims 1 -> 2 too: not alone");
  t.notOk(seen.alone(sh, near, pe(1), EAST), 'nor on the next piece');
  t.equal(seen.linkReads, 3, 'a route not alone is read every piece');
  releaseLinks(sh, b);
  t.ok(seen.alone(sh, near, pe(1), EAST), "alone again once SIP 0's kernel ended");
  t.ok(seen.alone(sh, near, pe(1), EAST), 'and remembered');
  t.equal(seen.linkReads, 4, 'read once more');
  // A claim on its way (begun, its adds not all made): what the links say is answered, and not remembered.
  Atomics.add(sh.ctl, HEADER.CLAIMS_BEGUN, 1);
  t.ok(seen.alone(sh, near, pe(1), EAST), 'alone while the claim has not reached the route');
  t.ok(seen.alone(sh, near, pe(1), EAST), 'still');
  t.equal(seen.linkReads, 6, 'read every piece while a claim is on its way');
  Atomics.add(sh.ctl, HEADER.CLAIMS_DONE, 1);
  seen.alone(sh, near, pe(1), EAST);
  t.ok(seen.alone(sh, near, pe(1), EAST), 'remembered once it is done');
  t.equal(seen.linkReads, 7, 'read once after');
  // Another route of the same channel is read for itself.
  t.notOk(seen.alone(sh, far, pe(1), EAST), "SIP 0's route is not SIP 1's channel's");
  t.equal(seen.linkReads, 8, 'another route is read');
  releaseLinks(sh, a);
});

/** Publish an actor's state and clock by hand, as the scheduler does (its state word and its bit of the active bitmap). */
function setter(sh: SharedState) {
  const L = sh.layout;
  return (actor: number, state: number, clockPs: number) => {
    Atomics.store(sh.ctl, L.actor(actor, ACTOR.STATE), state);
    Atomics.add(sh.ctl, L.actor(actor, ACTOR.GEN), 1); // as the scheduler does: a horizon keeps a host's words while its generation stands
    const active = state === ACTOR_STATE.RUNNING || state === ACTOR_STATE.BLOCKED;
    markActive(sh.ctl, L, actor, active);
    sh.times[L.clock(actor)] = clockPs;
    actorActive(sh, actor, active); // a PE's floor follows, as the scheduler keeps it
  };
}

/** Publish PE `p`'s send east as arriving alone at `ps`, as a piece's check does (its floor rises with it). */
function arriveEast(sh: SharedState, p: number, ps: number): void {
  sh.times[sh.layout.flow(p, EAST, FLOW.ARRIVAL_PS)] = ps;
  raisePeFloor(sh, p, ps);
}

/** Publish actor `a` as blocked on ctl[word] >= target. */
function blockOn(sh: SharedState, a: number, kind: number, aux: number, word: number, target: number): void {
  const L = sh.layout;
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_KIND), kind);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_AUX), aux);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_WORD), word);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_TARGET), target);
}

t.test('the launch horizon: what bounds it, what does not, and it is kept', async (t) => {
  const sh = fresh();
  const L = sh.layout;
  const set = setter(sh);
  set(L.peActor(pe(1)), ACTOR_STATE.BLOCKED, 100);
  arriveEast(sh, pe(1), 500);
  const host = L.hostActor(1);
  set(host, ACTOR_STATE.RUNNING, 50);
  t.equal(launchHorizon(sh, m), 50, 'a running host: its clock');
  // The host now waits for its kernel on SIP 1 (not done): it launches only after that kernel's end.
  Atomics.store(sh.ctl, L.actor(host, ACTOR.WAIT_KIND), WAIT_KIND.KERNEL_DONE);
  Atomics.store(sh.ctl, L.actor(host, ACTOR.WAIT_WORD), L.pe(pe(1), PE.DONE_SEQ));
  Atomics.store(sh.ctl, L.actor(host, ACTOR.WAIT_TARGET), 1);
  Atomics.store(sh.ctl, L.actor(host, ACTOR.WAIT_AUX), pe(1));
  set(host, ACTOR_STATE.BLOCKED, 60); // its wait words first, then the state and the generation
  t.equal(launchHorizon(sh, m), 500, 'a host waiting for a kernel does not bound it; the kernel\'s PE does, by its send\'s arrival');
  publishClock(sh, L.peActor(pe(1)), 700);
  t.equal(launchHorizon(sh, m), 700, 'or by its clock, the later of the two');
  t.equal(keptHorizon(sh), 700, 'the highest found is kept');
  Atomics.add(sh.ctl, HEADER.COMMANDS_IN_FLIGHT, 1);
  t.equal(launchHorizon(sh, m), -Infinity, 'a command in flight: no bound');
  t.equal(keptHorizon(sh), 700, 'the kept one stands (it bounded every later launch when found)');
});

t.test('a horizon reads one word of a host whose generation it has seen, not its state and wait again', async (t) => {
  const sh = fresh();
  const L = sh.layout;
  const set = setter(sh);
  // This thread is executor 1 of 2: the PEs and hosts are executor 0's, their words loaded (lib/sync/owned.ts).
  setOwnActors(sh, Array.from({ length: L.dims.pes }, () => 0), Array.from({ length: L.dims.hosts }, () => 0), 1);
  set(L.peActor(pe(1)), ACTOR_STATE.BLOCKED, 100);
  const hosts = [0, 1, 2, 3, 4, 5, 6, 7].map((h) => L.hostActor(h));
  for (const [i, a] of hosts.entries()) {
    Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_KIND), WAIT_KIND.KERNEL_DONE);
    Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_WORD), L.pe(pe(i), PE.DONE_SEQ));
    Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_TARGET), 1);
    Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_AUX), pe(i));
    set(a, ACTOR_STATE.BLOCKED, 10);
  }
  t.equal(launchHorizon(sh, m, false), 100, 'hosts waiting for their kernels do not bound it');
  const load = Atomics.load;
  let hostWords = 0;
  Atomics.load = ((a: Int32Array, i: number): number => {
    if (hosts.some((h) => i >= L.actor(h, 0) && i < L.actor(h + 1, 0))) hostWords++;
    return load(a, i);
  }) as typeof Atomics.load;
  try {
    t.equal(launchHorizon(sh, m, false), 100, 'the same horizon again');
  } finally {
    Atomics.load = load;
  }
  t.equal(hostWords, hosts.length, 'one word a blocked host (its generation), not its state and three wait words');
  // A host whose generation moved is read afresh: the test above (running, then blocked on its kernel).
});

t.test('the launch horizon looks through a receive: a kernel waiting for a message ends no earlier than its arrival', async (t) => {
  const WEST_IN = 4 + 1;
  /** SIP `to`'s kernel waits, since `at`, for its receive from the west, whose inbound channel waits for message #0 of SIP `from`'s east ring. */
  const waitsFor = (sh: SharedState, to: number, from: number, at: number): number => {
    const L = sh.layout;
    const set = setter(sh);
    const k = L.peActor(pe(to));
    set(k, ACTOR_STATE.BLOCKED, at);
    blockOn(sh, k, WAIT_KIND.CHANNEL, WEST_IN, L.pe(pe(to), PE.CHAN_DONE + WEST_IN), 1);
    const inbound = L.channelActor(pe(to), WEST_IN);
    const ring = L.ringOf(pe(from), EAST, 0);
    set(inbound, ACTOR_STATE.BLOCKED, at);
    blockOn(sh, inbound, WAIT_KIND.IPCQ_DATA, ring, L.ring(ring, RING.TAIL), 1);
    return ring;
  };
  const cm = new CostModel(m);
  t.ok(cm.flightPs(pe(1), pe(2)) > 0, 'the route has a latency');
  let sh = fresh();
  setter(sh)(sh.layout.peActor(pe(1)), ACTOR_STATE.RUNNING, 5_000_000);
  waitsFor(sh, 2, 1, 200_000);
  t.equal(launchHorizon(sh, m), 5_000_000, 'SIP 2 (at 200 ns) waits for SIP 1 (running at 5000 ns): it ends after the message arrives, so SIP 1 bounds the horizon');
  // A chain: SIP 1 waits too, for SIP 0, which runs at 9000 ns.
  setter(sh)(sh.layout.peActor(pe(0)), ACTOR_STATE.RUNNING, 9_000_000);
  waitsFor(sh, 1, 0, 5_000_000);
  t.equal(launchHorizon(sh, m), 9_000_000, 'SIP 2 waits for SIP 1, which waits for SIP 0: each ends a flight after the one before');
  t.ok(cm.flightPs(pe(0), pe(1)) + 9_000_000 > 9_000_000);
  // The same wait, its message published since: no lookahead, SIP 2's clock bounds it.
  sh = fresh();
  setter(sh)(sh.layout.peActor(pe(1)), ACTOR_STATE.RUNNING, 5_000_000);
  const ring = waitsFor(sh, 2, 1, 200_000);
  Atomics.store(sh.ctl, sh.layout.ring(ring, RING.TAIL), 1);
  t.equal(launchHorizon(sh, m), 200_000, 'a published message: the waiter is bounded by its clock');
  // A sender whose kernel is not running: a later kernel may send at any time, so no lookahead.
  sh = fresh();
  waitsFor(sh, 2, 1, 200_000);
  t.equal(launchHorizon(sh, m), 200_000, 'no kernel on the sender: the waiter is bounded by its clock');
});

t.test('a kernel waiting on a busy channel, its own or its sender\'s, acts no earlier than that channel lets it', async (t) => {
  const WEST_IN = 4 + 1;
  const sh = fresh();
  const L = sh.layout;
  const set = setter(sh);
  const cm = new CostModel(m);
  const flight = cm.flightPs(pe(1), pe(2));
  // SIP 1's kernel runs at 300 ns; its east channel holds a piece whose end alone is 6000 ns.
  set(L.peActor(pe(1)), ACTOR_STATE.RUNNING, 300_000);
  const east1 = L.channelActor(pe(1), EAST);
  set(east1, ACTOR_STATE.RUNNING, 4_000_000);
  Atomics.store(sh.ctl, L.pe(pe(1), PE.HOLD + EAST), 1);
  sh.times[L.flow(pe(1), EAST, FLOW.END_PS)] = 6_000_000;
  sh.times[L.flow(pe(1), EAST, FLOW.LATENCY_PS)] = flight;
  // SIP 2's kernel waits, since 200 ns, for message #0 of SIP 1's east ring.
  const k2 = L.peActor(pe(2));
  set(k2, ACTOR_STATE.BLOCKED, 200_000);
  blockOn(sh, k2, WAIT_KIND.CHANNEL, WEST_IN, L.pe(pe(2), PE.CHAN_DONE + WEST_IN), 1);
  const in2 = L.channelActor(pe(2), WEST_IN);
  const ring = L.ringOf(pe(1), EAST, 0);
  set(in2, ACTOR_STATE.BLOCKED, 200_000);
  blockOn(sh, in2, WAIT_KIND.IPCQ_DATA, ring, L.ring(ring, RING.TAIL), 1);
  const floor = (_sh: unknown, x: number) => sh.times[L.clock(L.peActor(x))];
  const ends = new Float64Array(L.dims.pes);
  kernelEndBounds(sh, m, floor, ends);
  // The message comes from the busy channel, behind its held piece, even if SIP 1's kernel sends anew at 300 ns.
  t.equal(kernelFlowNow(pe(2)), 6_000_000 - 1, 'the receiver: the held piece\'s end (a send issued later queues behind it), not its sender\'s kernel clock plus a flight');
  t.equal(ends[pe(2)], 6_000_000 - 1, 'and its kernel ends no earlier');
  // SIP 1's kernel waits for its own east send to settle: no earlier than the held piece's last byte left.
  const k1 = L.peActor(pe(1));
  set(k1, ACTOR_STATE.BLOCKED, 300_000);
  blockOn(sh, k1, WAIT_KIND.CHANNEL, EAST, L.pe(pe(1), PE.CHAN_DONE + EAST), 1);
  kernelEndBounds(sh, m, floor, ends);
  t.equal(kernelFlowNow(pe(1)), 6_000_000 - flight, 'a kernel waiting for its send: the held piece\'s end less its flight');
  // The receive's message published since: the inbound channel still has it to take in, so its clock bounds the kernel.
  Atomics.store(sh.ctl, L.ring(ring, RING.TAIL), 1);
  set(in2, ACTOR_STATE.BLOCKED, 3_000_000);
  kernelEndBounds(sh, m, floor, ends);
  t.equal(kernelFlowNow(pe(2)), 3_000_000, 'a published message: the receiving channel\'s clock, not the kernel\'s');
});

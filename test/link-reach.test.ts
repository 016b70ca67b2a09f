// Runs on: main thread (tap), no threads. Covers: the reach of a link (lib/sync/link-reach.ts,
// decision 0170) on shared words set by hand, on the ideal ring of 8 SIPs (one PE each, every
// link 1000 ns): a PE k links back from a link's source bounds the earliest join of a flow
// not claimed yet by its floor plus (k + 1) latencies; the link's far end does not bound
// it, and PEs past it only by the way round that avoids it (a route is a simple path); an idle PE is bounded by the horizon only; a band
// read when a PE lagged is read again once it has caught up; a pe_pe link needs only the
// PE it leaves; a thread makes bands only for the links it asks about (decision 0243).
import { actorActive, peFloor, publishClock, raisePeFloor } from '../lib/sync/pe-floor.js';
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { ACTOR, ACTOR_STATE, FLOW } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { Links } from '../lib/topology/links.js';
import { Machine } from '../lib/topology/machine.js';
import { LinkReach, unreachedBefore } from '../lib/sync/link-reach.js';
import { markActive } from '../lib/shm/active-actors.js';

const NS = 1000; // ps
const ALPHA = 1000 * NS;

function ring(): { m: Machine; links: Links; sh: SharedState } {
  const m = new Machine(loadTopology(topologyPath('ideal'), ['system.sips.count=8']));
  const links = new Links(m);
  const sh = SharedState.create({ executors: 1, pes: m.totalPes, hosts: 9, nSlots: 2, slotSize: 64, cubes: m.sips * m.cubesPerSip, arenaBytes: 1024, links: links.count });
  return { m, links, sh };
}

/** Publish PE `pe`'s kernel as active at clock `clockPs` (its floor), as the scheduler does; null: idle. */
function floorOf(sh: SharedState, pe: number, clockPs: number | null): void {
  const L = sh.layout;
  const a = L.peActor(pe);
  if (clockPs === null) {
    actorActive(sh, a, false);
    Atomics.store(sh.ctl, L.actor(a, ACTOR.STATE), ACTOR_STATE.IDLE);
    markActive(sh.ctl, L, a, false);
    return;
  }
  sh.times[L.clock(a)] = clockPs;
  actorActive(sh, a, true);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.STATE), ACTOR_STATE.BLOCKED);
  markActive(sh.ctl, L, a, true);
}

t.test('a link is reached from its upstream PEs, each a latency further back; not from past its far end', async (t) => {
  const { m, links, sh } = ring();
  const route = links.route(3, 4); // the link 3 -> 4
  t.equal(route.length, 1);
  const end = 10 * ALPHA;
  const h = 0;
  // PE 3 sent the piece: its floor is the piece's arrival. Everyone else far ahead.
  for (let pe = 0; pe < 8; pe++) floorOf(sh, pe, 100 * ALPHA);
  floorOf(sh, 3, end);
  t.ok(unreachedBefore(sh, new LinkReach(m, links), route, 3, end, h), 'every PE ahead: alone');
  // PE 2 (one link back: its flow joins 3 -> 4 two latencies after it starts) at end - 2 alpha: just in time.
  floorOf(sh, 2, end - 2 * ALPHA);
  t.ok(unreachedBefore(sh, new LinkReach(m, links), route, 3, end, h), 'PE 2 at end - 2 alpha: its flow joins at the end');
  floorOf(sh, 2, end - 2 * ALPHA - 1);
  t.notOk(unreachedBefore(sh, new LinkReach(m, links), route, 3, end, h), 'PE 2 a picosecond earlier: it could join before the end');
  floorOf(sh, 2, 100 * ALPHA);
  // PE 0, three links back: four latencies.
  floorOf(sh, 0, end - 4 * ALPHA - 1);
  t.notOk(unreachedBefore(sh, new LinkReach(m, links), route, 3, end, h), 'PE 0 three links back, a picosecond short of four latencies');
  floorOf(sh, 0, end - 4 * ALPHA);
  t.ok(unreachedBefore(sh, new LinkReach(m, links), route, 3, end, h), 'PE 0 at end - 4 alpha: in time');
  // PE 4 is the link's far end: a route over 3 -> 4 never starts there. PE 5 is one link
  // past it: its routes reach 3 only the long way round (5 6 7 0 1 2 3: seven latencies).
  floorOf(sh, 4, 0);
  floorOf(sh, 5, end - 7 * ALPHA);
  t.ok(unreachedBefore(sh, new LinkReach(m, links), route, 3, end, h), 'PE 4 far behind, PE 5 seven latencies back: neither reaches 3 -> 4 before the end');
  floorOf(sh, 5, end - 7 * ALPHA - 1);
  t.notOk(unreachedBefore(sh, new LinkReach(m, links), route, 3, end, h), 'PE 5 a picosecond earlier does');
});

t.test('an idle PE is bounded by the horizon alone', async (t) => {
  const { m, links, sh } = ring();
  const route = links.route(3, 4);
  const end = 10 * ALPHA;
  for (let pe = 0; pe < 8; pe++) floorOf(sh, pe, 100 * ALPHA);
  floorOf(sh, 3, end);
  floorOf(sh, 1, null); // two links back: three latencies
  t.notOk(unreachedBefore(sh, new LinkReach(m, links), route, 3, end, 0), 'an idle PE with no horizon: it may launch now');
  t.ok(unreachedBefore(sh, new LinkReach(m, links), route, 3, end, end - 3 * ALPHA), 'a horizon three latencies before the end covers it');
});

t.test('a band read while a PE lagged is read again once it has caught up', async (t) => {
  const { m, links, sh } = ring();
  const reach = new LinkReach(m, links);
  const route = links.route(3, 4);
  const end = 10 * ALPHA;
  for (let pe = 0; pe < 8; pe++) floorOf(sh, pe, 100 * ALPHA);
  floorOf(sh, 3, end);
  floorOf(sh, 2, 0);
  t.notOk(unreachedBefore(sh, reach, route, 3, end, 0), 'PE 2 behind');
  floorOf(sh, 2, end);
  t.ok(unreachedBefore(sh, reach, route, 3, end, 0), 'PE 2 caught up: the same reach says alone');
  // A later piece: the value read then still bounds, and is read again when it does not reach.
  floorOf(sh, 3, 2 * end);
  t.notOk(unreachedBefore(sh, reach, route, 3, 2 * end, 0), 'a piece past what PE 2 bounds');
});

t.test('a pe_pe link: only the PE it leaves starts a route over it', async (t) => {
  const m = new Machine(loadTopology(topologyPath('default'), ['system.sips.count=2']));
  const links = new Links(m);
  const sh = SharedState.create({ executors: 1, pes: m.totalPes, hosts: 3, nSlots: 2, slotSize: 64, cubes: m.sips * m.cubesPerSip, arenaBytes: 1024, links: links.count });
  const a = m.peId({ sip: 0, cube: 0, pe: 0 });
  const b = m.peId({ sip: 0, cube: 0, pe: 1 });
  const route = links.route(a, b);
  t.equal(links.classOf(route[0]), 'pe_pe');
  // Every other PE idle, no horizon: still alone, since none of them can cross a -> b.
  for (let pe = 0; pe < m.totalPes; pe++) floorOf(sh, pe, null);
  floorOf(sh, a, 5 * ALPHA);
  t.ok(unreachedBefore(sh, new LinkReach(m, links), route, a, 5 * ALPHA, -Infinity), 'every other PE idle and no horizon: none of them crosses it');
});

t.test('a link of a line of up to 65 SIPs keeps its whole line: a deep band is read from the list, not walked, with the walk\'s answer (decision 0230)', async (t) => {
  // A line, not a ring: a ring's links read the ring's range minimum instead (test/cycle-floors.test.ts).
  // 50 SIPs: 49 levels of one node each, more runs than a link keeps (decision 0258), so bands, from the list.
  for (const [sips, walks] of [[50, false], [80, true]] as const) {
    const m = new Machine(loadTopology(topologyPath('line_1d_4'), [`system.sips.count=${sips}`]));
    const links = new Links(m);
    const sh = SharedState.create({ executors: 1, pes: m.totalPes, hosts: sips + 1, nSlots: 2, slotSize: 64, cubes: m.sips * m.cubesPerSip, arenaBytes: 1024, links: links.count });
    const reach = new LinkReach(m, links);
    const route = links.route(sips - 2, sips - 1); // the link to the line's last SIP
    const lb = reach.bandsOf(route[0]);
    t.equal(lb.graph.cycle, null, `${sips} SIPs: a line is not a ring`);
    t.notOk(lb.hasRuns(), `${sips} SIPs: nor a few runs`);
    const a = lb.latencyPs;
    const end = 100 * a;
    for (let pe = 0; pe < sips; pe++) floorOf(sh, pe, 1000 * a);
    floorOf(sh, sips - 2, end);
    // The PE 20 links back (level 21, band 4): its flow joins 21 latencies after it starts.
    const far = sips - 22;
    floorOf(sh, far, end - 21 * a - 1);
    t.notOk(unreachedBefore(sh, reach, route, sips - 2, end, 0), `${sips} SIPs: a PE 20 links back, a picosecond short`);
    const stamp = lb.graph.walk.stamp;
    floorOf(sh, far, end - 21 * a);
    t.ok(unreachedBefore(sh, reach, route, sips - 2, end, 0), `${sips} SIPs: and once it is just in time, alone`);
    t.equal(lb.graph.walk.stamp !== stamp, walks, walks ? `${sips} SIPs: more than 64 nodes behind the link, its band is walked again` : `${sips} SIPs: its band read again from the list, no walk`);
  }
});

t.test('a thread makes the bands of the links it asks about, none other (decision 0243: not p^2 in all under --threads rank)', async (t) => {
  const m = new Machine(loadTopology(topologyPath('ideal'), ['system.sips.count=256']));
  const links = new Links(m);
  const sh = SharedState.create({ executors: 1, pes: m.totalPes, hosts: 257, nSlots: 2, slotSize: 64, cubes: m.sips * m.cubesPerSip, arenaBytes: 1024, links: links.count });
  const reach = new LinkReach(m, links);
  t.equal(reach.bandsMade, 0, 'none made by the constructor');
  for (let pe = 0; pe < 256; pe++) floorOf(sh, pe, 100 * ALPHA);
  const route = links.route(3, 4);
  floorOf(sh, 3, 10 * ALPHA);
  floorOf(sh, 1, 10 * ALPHA - 3 * ALPHA - 1);
  t.notOk(unreachedBefore(sh, reach, route, 3, 10 * ALPHA, 0), 'PE 1, two links back, a picosecond short of three latencies');
  floorOf(sh, 1, 10 * ALPHA - 3 * ALPHA);
  t.ok(unreachedBefore(sh, reach, route, 3, 10 * ALPHA, 0), 'PE 1 at three latencies: alone');
  t.equal(reach.bandsMade, route.length, "the route's links only");
  t.equal(reach.minLatencyPs(links.route(3, 5)), ALPHA);
  t.equal(reach.bandsMade, route.length + 1, 'and the next link once asked for');
});

t.test("a PE's floor is one word: its clock and arrivals while its kernel is active, raised only then, -Infinity without one (decision 0251)", async (t) => {
  const { sh } = ring();
  const L = sh.layout;
  const a = L.peActor(2);
  t.equal(peFloor(sh, 2), -Infinity, 'no kernel yet');
  sh.times[L.clock(a)] = 300;
  sh.times[L.flow(2, 0, FLOW.ARRIVAL_PS)] = 500;
  actorActive(sh, a, true);
  t.equal(peFloor(sh, 2), 500, 'active: the later of its clock and its arrivals');
  publishClock(sh, a, 700);
  t.equal(peFloor(sh, 2), 700, 'a published clock raises it');
  t.equal(sh.times[L.clock(a)], 700, 'and is the clock word');
  raisePeFloor(sh, 2, 600);
  t.equal(peFloor(sh, 2), 700, 'an earlier arrival does not lower it');
  actorActive(sh, L.channelActor(2, 0), false);
  publishClock(sh, L.channelActor(2, 0), 900);
  t.equal(peFloor(sh, 2), 700, "its channels' actors are not its kernel");
  actorActive(sh, a, false);
  t.equal(peFloor(sh, 2), -Infinity, 'its kernel ended');
  raisePeFloor(sh, 2, 900);
  publishClock(sh, a, 900);
  t.equal(peFloor(sh, 2), -Infinity, 'nothing raises the floor of a PE without a kernel');
});

t.test("a piece of a link's one PE is proved by the bound its last check kept, without reading the link's bands (decision 0251)", async (t) => {
  const { m, links, sh } = ring();
  const route = links.route(3, 4);
  const l = route[0];
  const end = 10 * ALPHA;
  for (let pe = 0; pe < 8; pe++) floorOf(sh, pe, 100 * ALPHA);
  floorOf(sh, 3, end);
  floorOf(sh, 2, end - 2 * ALPHA); // one link back: its flow would join 3 -> 4 at the end exactly
  const reach = new LinkReach(m, links);
  t.equal(reach.clearFrom2[l], -Infinity, 'nothing kept before a check');
  t.ok(unreachedBefore(sh, reach, route, 3, end, 0), 'alone');
  t.equal(reach.clearFrom2[l], end, "the check kept the lowest bound it proved: PE 2's");
  // Floors only rise in a run; lowering PE 2's shows which pieces still read the bands.
  floorOf(sh, 2, 0);
  t.ok(unreachedBefore(sh, reach, route, 3, end, 0), 'a piece ending at the kept bound is proved from it: the bands are not read');
  t.notOk(unreachedBefore(sh, reach, route, 3, end + 1, 0), 'one ending past it reads them, and finds PE 2');
  floorOf(sh, 2, 50 * ALPHA);
  t.ok(unreachedBefore(sh, reach, route, 3, end + 1, 0), 'and again, once PE 2 moved on');
  t.equal(reach.clearFrom2[l], 52 * ALPHA, 'the bound kept rises with it');
});

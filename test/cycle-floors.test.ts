// Runs on: main thread (tap), no threads. Covers: the reach of a ring's links read as a
// range minimum (lib/sync/cycle-floors.ts, decision 0257), on shared words set by hand: a
// ring's class graph is found (and a line's is not); on random runs of floors that only
// rise, every answer of unreachedBefore equals the definition read level by level, in both
// directions, across the wrap, with idle PEs and several PEs a SIP; a floor read for
// one link's piece answers the next link's without being read again; and on a ring moving
// in step, the bound a piece's check keeps answers the link's next piece (decision 0277).
import t from 'tap';
import type { SharedState } from '../lib/shm/shared-state.js';
import type { Machine } from '../lib/topology/machine.js';
import { LinkReach, unreachedBefore } from '../lib/sync/link-reach.js';
import { peFloor } from '../lib/sync/pe-floor.js';
import { latencyPs } from '../lib/time/virtual-time.js';
import { prng } from './helpers/prng.js';
import { activeAt, FloorWalk, reachMachine } from './helpers/reach-state.js';

/**
 * The definition, level by level (decision 0170): no PE of a SIP k - 1 ring links back from
 * the link's source, the far end excluded, at max(floor, h) + k * a below `endPs`; the
 * piece's own PE skipped when it is its SIP's only one.
 */
function definition(m: Machine, sh: SharedState, from: number, to: number, pe: number, endPs: number, h: number, a: number): boolean {
  const n = m.sips;
  const step = to === (from + 1) % n ? -1 : 1; // levels go against the link
  for (let k = 1; k <= n - 1; k++) {
    const u = (((from + step * (k - 1)) % n) + n) % n;
    for (let x = u * m.pesPerSip; x < (u + 1) * m.pesPerSip; x++) {
      if (x === pe && m.pesPerSip === 1) continue;
      if (Math.max(peFloor(sh, x), h) + k * a < endPs) return false;
    }
  }
  return true;
}

t.test("a ring's links read the ring's range minimum; a line's do not", async (t) => {
  for (const [topology, sips, ring] of [['ideal', 37, true], ['default', 5, true], ['ideal', 2, false], ['line_1d_4', 9, false]] as const) {
    const { m, links } = reachMachine(topology, [`system.sips.count=${sips}`]);
    const reach = new LinkReach(m, links);
    const link = links.route(m.peId({ sip: 1, cube: 0, pe: 0 }), m.peId({ sip: 0, cube: 0, pe: 0 })).find((l) => links.classOf(l) === 'sip_sip') as number;
    t.equal(reach.bandsOf(link).graph.cycle !== null, ring, `${topology}, ${sips} SIPs: ${ring ? 'a ring' : 'not a ring'}`);
  }
});

t.test('on random runs whose floors only rise, every answer is the definition read level by level', async (t) => {
  for (const [topology, sips, seed] of [['ideal', 37, 1], ['ideal', 64, 2], ['default', 5, 3]] as const) {
    const { m, links, sh } = reachMachine(topology, [`system.sips.count=${sips}`]);
    const reach = new LinkReach(m, links);
    const a = latencyPs(topology === 'ideal' ? 1000 : m.topology.timing.links.sip_sip.latency_ns);
    const rand = prng(seed);
    // Some PEs stay idle, about one SIP in seven with one.
    const walk = new FloorWalk(sh, m.totalPes, rand, a, 0.15 / m.pesPerSip, (r) => Math.floor(r() * 20) * a);
    let agreed = 0;
    let alone = 0;
    for (let round = 0; round < 3000; round++) {
      walk.next(round);
      const { lowest, h } = walk;
      const src = Math.floor(rand() * m.sips);
      const dst = (src + (rand() < 0.5 ? 1 : m.sips - 1)) % m.sips;
      const pe = m.peId({ sip: src, cube: 0, pe: 0 });
      const route = links.route(pe, m.peId({ sip: dst, cube: 0, pe: 0 })).filter((l) => links.classOf(l) === 'sip_sip');
      // A piece ending a few latencies past the lowest floor: near enough for either answer.
      const endPs = lowest + Math.floor(rand() * 8 * a);
      const got = unreachedBefore(sh, reach, route, pe, endPs, h);
      const want = definition(m, sh, src, dst, pe, endPs, h, a);
      if (got === want) agreed++;
      else t.fail(`${topology}, ${sips} SIPs, round ${round}: link ${src} -> ${dst}, end ${endPs}, h ${h}: ${got} against ${want}`);
      if (got) alone++;
    }
    t.equal(agreed, 3000, `${topology}, ${sips} SIPs: 3000 answers, each the definition's`);
    t.ok(alone > 300 && alone < 2700, `${topology}, ${sips} SIPs: both answers occur (${alone} alone)`);
  }
});

t.test("a floor read for one link's piece answers the next link's without being read again", async (t) => {
  const { m, links, sh } = reachMachine('ideal', ['system.sips.count=64']);
  const reach = new LinkReach(m, links);
  const a = latencyPs(1000);
  // Every PE one latency behind the next: a ring's ramp (decision 0249), 64 levels deep.
  for (let pe = 0; pe < 64; pe++) activeAt(sh, pe, (100 + pe) * a);
  const cycle = reach.bandsOf(links.route(40, 41)[0]).graph.cycle;
  t.ok(cycle !== null);
  // PE 40's piece, ending one latency after its floor: every PE behind it bounds it at exactly that.
  t.ok(unreachedBefore(sh, reach, links.route(40, 41), 40, 141 * a, -Infinity), "PE 40's piece");
  const read = cycle!.leavesRead;
  t.ok(read >= 62, `its check read the ring's floors (${read} leaves)`);
  t.ok(unreachedBefore(sh, reach, links.route(41, 42), 41, 142 * a, -Infinity), "PE 41's piece, a latency later");
  t.equal(cycle!.leavesRead - read, 1, "only PE 40's floor, which PE 40's own check skipped, is read for it");
  t.notOk(unreachedBefore(sh, reach, links.route(41, 42), 41, 142 * a + 1, -Infinity), 'a picosecond later, PE 40 could join first');
});

t.test("on a ring moving in step, the bound a piece's check keeps answers the link's next piece, a latency later", async (t) => {
  const { m, links, sh } = reachMachine('ideal', ['system.sips.count=64']);
  const reach = new LinkReach(m, links);
  const a = latencyPs(1000);
  // Every PE at one floor, the horizon ten and a half latencies behind it (it is taken now and then).
  for (let pe = 0; pe < 64; pe++) activeAt(sh, pe, 100 * a);
  const h = 89.5 * a;
  const route = links.route(40, 41);
  const cycle = reach.bandsOf(route[0]).graph.cycle!;
  t.ok(unreachedBefore(sh, reach, route, 40, 101 * a, h), "PE 40's piece, ending a latency past the floors");
  t.ok(definition(m, sh, 40, 41, 40, 101 * a, h, a), 'as the definition says');
  // Levels 2 to 11 are read from the floors (the horizon answers from level 12, 101.5 latencies); level 12 from its floor too.
  t.ok(reach.clearFrom2[route[0]] >= 102 * a, `the bound kept for the link reaches the next piece's end (${reach.clearFrom2[route[0]] / a} latencies)`);
  const read = cycle.leavesRead;
  t.ok(unreachedBefore(sh, reach, route, 40, 102 * a, h), 'the next piece, a latency later');
  t.ok(definition(m, sh, 40, 41, 40, 102 * a, h, a), 'as the definition says');
  t.equal(cycle.leavesRead, read, 'answered by the kept bound: no floor read');
  t.notOk(unreachedBefore(sh, reach, route, 40, 102.5 * a + 1, h), 'half a latency later PE 39 could join first');
  t.notOk(definition(m, sh, 40, 41, 40, 102.5 * a + 1, h, a), 'as the definition says');
});

// Runs on: main thread (tap), no threads. Covers: the reach of a switched fabric's links
// read as range minima over runs of nodes (lib/sync/range-floors.ts, decision 0258), on
// shared words set by hand: a switch's, a leaf-spine fabric's and a mesh's links keep
// their levels as runs, a torus's do not (too many); on random runs whose floors only rise,
// every answer of unreachedBefore equals the definition read level by level from a walk of
// the links; and a floor read for one link's piece answers another link's without being
// read again.
import t from 'tap';
import type { SharedState } from '../lib/shm/shared-state.js';
import type { Links } from '../lib/topology/links.js';
import type { Machine } from '../lib/topology/machine.js';
import { LinkReach, unreachedBefore } from '../lib/sync/link-reach.js';
import { peFloor } from '../lib/sync/pe-floor.js';
import { appendRuns, MAX_RUNS } from '../lib/sync/range-floors.js';
import { prng } from './helpers/prng.js';
import { activeAt, FloorWalk, reachMachine } from './helpers/reach-state.js';

/** The sip_sip link ids of the machine, and each node's in-neighbours over them (SIPs, then switches). */
function sipGraph(m: Machine, links: Links): { ids: number[]; into: number[][] } {
  const into: number[][] = Array.from({ length: m.sips + m.fabric.switches }, () => []);
  const ids: number[] = [];
  for (let id = 0; id < links.count; id++) {
    const e = links.ends(id);
    if (e.to < 0 || e.cls !== 'sip_sip') continue;
    ids.push(id);
    into[e.to].push(e.from);
  }
  return { ids, into };
}

/**
 * The definition (decision 0170), level by level from a walk: level 1 is the link's source
 * node, level k the nodes first reached k - 1 links back, never through its far end; no PE
 * of a SIP there at max(floor, h) + k * a below `endPs` (the piece's own PE skipped when it
 * is its SIP's only one).
 */
function definition(m: Machine, into: number[][], from: number, to: number, pe: number, endPs: number, h: number, a: number): boolean {
  const seen = new Set([from, to]);
  let level = [from];
  for (let k = 1; level.length > 0; k++) {
    for (const u of level) {
      if (u >= m.sips) continue; // a switch has no PEs
      for (let x = u * m.pesPerSip; x < (u + 1) * m.pesPerSip; x++) {
        if (x === pe && m.pesPerSip === 1) continue;
        if (Math.max(peFloor(sh0, x), h) + k * a < endPs) return false;
      }
    }
    const next: number[] = [];
    for (const u of level) for (const v of into[u]) if (!seen.has(v)) (seen.add(v), next.push(v));
    level = next;
  }
  return true;
}
let sh0: SharedState;

t.test('runs of consecutive nodes, a level at a time, up to MAX_RUNS', async (t) => {
  const runs: number[] = [];
  t.ok(appendRuns(runs, 2, [7, 0, 1, 2, 5, 6]));
  t.same(runs, [2, 0, 2, 2, 5, 7], 'sorted, and each run of consecutive ids one entry');
  const many: number[] = [];
  t.notOk(appendRuns(many, 1, Array.from({ length: MAX_RUNS + 1 }, (_, i) => 2 * i)), 'one run more than MAX_RUNS: refused');
});

t.test("a switch's, a leaf-spine fabric's and a mesh's links keep their levels as runs; a torus's do not", async (t) => {
  for (const [topology, sets, want] of [
    ['single_switch_8', ['system.sips.count=40'], true],
    ['fat_tree_2l_16', [], true],
    ['mesh_2d_2x3', [], true],
    ['torus_2d_2x3', ['system.sips.count=400', 'system.sips.w=20', 'system.sips.h=20'], false],
  ] as const) {
    const { m, links } = reachMachine(topology, sets);
    const reach = new LinkReach(m, links);
    const { ids } = sipGraph(m, links);
    const kept = ids.filter((id) => reach.bandsOf(id).hasRuns()).length;
    t.equal(kept === ids.length, want, `${topology}: ${kept} of ${ids.length} links keep runs`);
  }
});

t.test('on random runs whose floors only rise, every answer is the definition read level by level', async (t) => {
  for (const [topology, sets, seed] of [
    ['single_switch_8', ['system.sips.count=40'], 1],
    ['fat_tree_2l_16', [], 2],
    // A mesh's links leave a SIP: the bound a check keeps for the next piece of its one PE (decision 0251) comes from the runs.
    ['mesh_2d_2x3', ['system.sips.count=25', 'system.sips.w=5', 'system.sips.h=5'], 3],
  ] as const) {
    const { m, links, sh } = reachMachine(topology, sets);
    sh0 = sh;
    const reach = new LinkReach(m, links);
    const { ids, into } = sipGraph(m, links);
    const a = reach.minLatencyPs([ids[0]]);
    const rand = prng(seed);
    // Some PEs stay idle.
    const walk = new FloorWalk(sh, m.totalPes, rand, a, 0.05, (r) => Math.floor(r() * 20 * a));
    let agreed = 0;
    let alone = 0;
    for (let round = 0; round < 3000; round++) {
      walk.next(round);
      const { lowest, h } = walk;
      // A piece of a random link (its source SIP's PE, or any PE when it leaves a switch), ending a few latencies past the lowest floor.
      const id = ids[Math.floor(rand() * ids.length)];
      const e = links.ends(id);
      const pe = e.from < m.sips ? e.from * m.pesPerSip : Math.floor(rand() * m.totalPes);
      const endPs = lowest + Math.floor(rand() * 8 * a);
      const got = unreachedBefore(sh, reach, [id], pe, endPs, h);
      const want = definition(m, into, e.from, e.to, e.from < m.sips ? pe : -1, endPs, h, a);
      if (got === want) agreed++;
      else t.fail(`${topology}, round ${round}: link ${e.from} -> ${e.to}, end ${endPs}, h ${h}: ${got} against ${want}`);
      if (got) alone++;
    }
    t.equal(agreed, 3000, `${topology}: 3000 answers, each the definition's`);
    t.ok(alone > 300 && alone < 2700, `${topology}: both answers occur (${alone} alone)`);
  }
});

t.test("a floor read for one link's piece answers another link's without being read again", async (t) => {
  const { m, links, sh } = reachMachine('single_switch_8', ['system.sips.count=64']);
  const reach = new LinkReach(m, links);
  const a = reach.minLatencyPs(links.route(0, 1));
  for (let pe = 0; pe < 64; pe++) activeAt(sh, pe, 100 * a + pe);
  // The switch's link to SIP 5, then to SIP 9: level 2 is every other SIP, whose lowest floor (SIP 0's) is 100 a.
  const into5 = links.route(0, 5)[1];
  const into9 = links.route(0, 9)[1];
  t.ok(unreachedBefore(sh, reach, [into5], 0, 102 * a, -Infinity), 'a piece on switch -> 5 ending at the lowest floor plus two latencies');
  const floors = reach.bandsOf(into5).graph.floors!;
  const read = floors.leavesRead;
  t.equal(read, 63, 'read every other SIP once');
  t.ok(unreachedBefore(sh, reach, [into9], 0, 102 * a, -Infinity), 'a piece on switch -> 9');
  t.equal(floors.leavesRead - read, 1, 'read SIP 5 only, which the first excluded');
  t.notOk(unreachedBefore(sh, reach, [into9], 0, 102 * a + 1, -Infinity), 'a picosecond later, SIP 0 could join first');
});

t.test("a check through runs keeps the lowest bound it proved for the link's next piece (decision 0251)", async (t) => {
  const { m, links, sh } = reachMachine('mesh_2d_2x3', ['system.sips.count=25', 'system.sips.w=5', 'system.sips.h=5']);
  const reach = new LinkReach(m, links);
  const route = links.route(12, 13); // the middle SIP to its neighbour: one link
  t.equal(route.length, 1);
  const l = route[0];
  const a = reach.minLatencyPs(route);
  for (let pe = 0; pe < 25; pe++) activeAt(sh, pe, 100 * a);
  activeAt(sh, 12, 10 * a); // the piece's own PE
  activeAt(sh, 7, 5 * a); // a neighbour of 12 other than 13: level 2
  t.ok(reach.bandsOf(l).hasRuns());
  t.ok(unreachedBefore(sh, reach, route, 12, 7 * a, -Infinity), "alone: SIP 7's flow would join at its floor plus two latencies, the piece's end");
  t.equal(reach.clearFrom2[l], 7 * a, "the bound kept is SIP 7's, the lowest proved");
  t.notOk(unreachedBefore(sh, reach, route, 12, 7 * a + 1, -Infinity), 'a picosecond later: not alone');
});

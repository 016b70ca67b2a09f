// Runs on: main thread (tap), no threads. Covers: the bounded per-pair memo of routes and
// costs (lib/topology/pair-cache.ts, decision 0259): it keeps at most 4 * PEs pairs (a
// power of two, at least 1 024), gives back what was kept for a pair and nothing for a
// pair it never kept or whose slot a newer pair took; and an all-to-all's every pair,
// asked for twice through Links and CostModel, gets the same routes and costs after the
// memo has cycled as before; and a fabric's own route memo is bounded the same way.
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { CostModel } from '../lib/topology/cost-model.js';
import { Links } from '../lib/topology/links.js';
import { Machine } from '../lib/topology/machine.js';
import { memoRoutes } from '../lib/topology/fabric.js';
import { PairCache } from '../lib/topology/pair-cache.js';

t.test('at most 4 * PEs pairs, each value given back for its own pair only', async (t) => {
  t.equal(new PairCache<number>(8).slots, 1024, 'at least 1 024');
  t.equal(new PairCache<number>(1000).slots, 4096, '4 * PEs, rounded up to a power of two');
  const c = new PairCache<number>(300);
  let kept = 0;
  let collided = 0;
  let justKept = 0;
  for (let from = 0; from < 300; from++) {
    for (let to = 0; to < 300; to++) {
      c.set(from, to, from * 1000 + to);
      if (c.get(from, to) === from * 1000 + to) justKept++;
    }
  }
  t.equal(justKept, 90000, 'each pair gives back what was just kept for it');
  for (let from = 0; from < 300; from++) {
    for (let to = 0; to < 300; to++) {
      const v = c.get(from, to);
      if (v === undefined) collided++;
      else if (v === from * 1000 + to) kept++;
      else t.fail(`pair (${from}, ${to}) gave (${Math.floor(v / 1000)}, ${v % 1000})'s value`);
    }
  }
  t.ok(kept <= c.slots, `${kept} pairs kept of 90 000, no more than its ${c.slots} slots`);
  t.ok(kept > c.slots / 2, 'and most slots in use');
  t.equal(kept + collided, 90000);
  t.equal(new PairCache<number>(4).get(1, 2), undefined, 'a pair never kept');
});

t.test("an all-to-all's every pair gets the same route and cost after the memo cycled", async (t) => {
  const m = new Machine(loadTopology(topologyPath('single_switch_8'), ['system.sips.count=200']));
  const links = new Links(m);
  const costs = new CostModel(m);
  const first = new Map<number, string>();
  for (let a = 0; a < m.totalPes; a++) for (let b = 0; b < m.totalPes; b++) first.set(a * m.totalPes + b, `${links.route(a, b).join(',')} ${costs.flightPs(a, b)} ${costs.bandwidthGbPerS(a, b)}`);
  let same = 0;
  for (let a = m.totalPes - 1; a >= 0; a--) for (let b = 0; b < m.totalPes; b++) if (first.get(a * m.totalPes + b) === `${links.route(a, b).join(',')} ${costs.flightPs(a, b)} ${costs.bandwidthGbPerS(a, b)}`) same++;
  t.equal(same, m.totalPes * m.totalPes, `${same} pairs, the same answers`);
  t.ok(m.totalPes * m.totalPes > 4 * new PairCache(m.totalPes).slots, 'more pairs than the memo keeps: it cycled');
});

t.test("a fabric's route memo (memoRoutes) is bounded too, and answers as the route it wraps (decision 0269)", async (t) => {
  const sips = 100;
  let asked = 0;
  const route = (a: number, b: number): number[] => {
    asked++;
    return [a, sips + b];
  };
  const memo = memoRoutes(sips, route);
  let right = 0;
  for (let pass = 0; pass < 2; pass++) for (let a = 0; a < sips; a++) for (let b = 0; b < sips; b++) if (memo(a, b).join(',') === (a === b ? '' : `${a},${sips + b}`)) right++;
  t.equal(right, 2 * sips * sips, 'every pair, both passes, the route it wraps (none from a to itself)');
  const slots = new PairCache(sips).slots;
  t.ok(asked > sips * (sips - 1), `the second pass asked again for pairs the memo no longer kept (${asked} calls for ${sips * (sips - 1)} pairs, ${slots} slots)`);
  asked = 0;
  for (let i = 0; i < 5; i++) memo(3, 4);
  t.ok(asked <= 1, 'a pair asked for again at once is kept');
});

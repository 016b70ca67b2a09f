// Runs on: main thread (tap). Covers: the switched SIP fabrics (decision 0050;
// lib/topology/fabric.ts, lib/topology/kinds/{fully_connected,single_switch,fat_tree_2l}.ts):
// their links and routes, the fat tree's ECMP rule and oversubscription, their
// params checked at file:line:col, the alpha-beta laws of the ring all-reduce on
// them, link sharing through a switch port, and the shipped files running the
// ring all-reduce with the same result on every thread layout.
import { relative } from 'node:path';
import t from 'tap';
import { configError } from './helpers/config-error.js';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { ConfigError } from '../lib/errors.js';
import { CostModel } from '../lib/topology/cost-model.js';
import { Links } from '../lib/topology/links.js';
import { Machine } from '../lib/topology/machine.js';
import { latencyPs, transferPs } from '../lib/time/virtual-time.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

/** The ideal alpha-beta machine (one PE a SIP) as kind `kind` with `sets`. */
function ideal(kind: string, sets: string[] = []): Machine {
  return new Machine(loadTopology(topologyPath('ideal'), [`system.sips.topology=${kind}`, ...sets]));
}

/** Node names along the SIP route a -> b (each link's end). */
function path(m: Machine, a: number, b: number): string[] {
  const links = new Links(m);
  const name = (n: number): string => m.fabric.nodeName?.(n) ?? String(n);
  return links.sipRoute(a, b).map((l) => name(links.ends(l).to));
}

t.test('fully_connected: every ordered pair has its own one-hop link, and no two pairs share one', async (t) => {
  const m = ideal('fully_connected', ['system.sips.count=5']);
  const links = new Links(m);
  const seen = new Set<number>();
  let bad = 0;
  for (let a = 0; a < 5; a++) {
    for (let b = 0; b < 5; b++) {
      if (a === b) continue;
      const r = links.sipRoute(a, b);
      if (r.length !== 1 || seen.has(r[0]) || links.ends(r[0]).from !== a || links.ends(r[0]).to !== b) bad++;
      seen.add(r[0]);
    }
  }
  t.same({ bad, links: seen.size, count: m.fabric.linkCount }, { bad: 0, links: 20, count: 20 });
});

t.test("single_switch: a route is the sender's up port then the receiver's down port, through the switch", async (t) => {
  const m = ideal('single_switch', ['system.sips.count=4']);
  t.same([path(m, 0, 3), path(m, 2, 1)], [['switch', 'sip 3'], ['switch', 'sip 1']]);
  const links = new Links(m);
  t.equal(links.sipRoute(0, 3)[1], links.sipRoute(1, 3)[1], 'two senders to one SIP share its down port');
  t.not(links.sipRoute(0, 3)[0], links.sipRoute(1, 3)[0], 'and each has its own up port');
});

t.test('fat_tree_2l: two hops within a leaf, four through one spine between leaves, that spine a fixed function of the pair', async (t) => {
  const m = ideal('fat_tree_2l', ['system.sips.count=16', 'system.sips.params.sips_per_leaf=4', 'system.sips.params.spines=4']);
  t.same(path(m, 0, 3), ['leaf 0', 'sip 3']);
  const cross = path(m, 1, 14);
  t.same([cross.length, cross[0], cross[2], cross[3]], [4, 'leaf 0', 'leaf 3', 'sip 14']);
  t.match(cross[1], /^spine [0-3]$/);
  // Spread: over the 192 cross-leaf pairs every spine carries some, none more than half.
  const spines = new Map<string, number>();
  for (let a = 0; a < 16; a++) for (let b = 0; b < 16; b++) if (Math.floor(a / 4) !== Math.floor(b / 4)) spines.set(path(m, a, b)[1], (spines.get(path(m, a, b)[1]) ?? 0) + 1);
  t.same([...spines.keys()].sort(), ['spine 0', 'spine 1', 'spine 2', 'spine 3']);
  t.ok(Math.max(...spines.values()) <= 96, `per spine: ${JSON.stringify([...spines])}`);
  t.same(path(ideal('fat_tree_2l', ['system.sips.count=16', 'system.sips.params.sips_per_leaf=4', 'system.sips.params.spines=4']), 1, 14), cross, 'a fresh machine routes the same');
});

t.test('fat_tree_2l oversubscription scales the leaf-spine links, and a transfer alone runs at its narrowest link', async (t) => {
  const m = ideal('fat_tree_2l', ['system.sips.count=8', 'system.sips.params.oversubscription=4']); // 4 a leaf, 2 spines: 4 / (4 x 2) = 1/2
  const links = new Links(m);
  const beta = m.topology.timing.links.sip_sip.bandwidth_gb_s;
  const alpha = m.topology.timing.links.sip_sip.latency_ns;
  t.same(links.sipRoute(0, 5).map((l) => links.bandwidthOf(l)), [beta, beta / 2, beta / 2, beta]);
  const costs = new CostModel(m);
  const bytes = 65536;
  t.same(costs.transfer(0, 5, bytes), { serialPs: transferPs(bytes, beta / 2), flightPs: 4 * latencyPs(alpha) }, 'between leaves');
  t.same(costs.transfer(0, 1, bytes), { serialPs: transferPs(bytes, beta), flightPs: 2 * latencyPs(alpha) }, 'within a leaf');
});

t.test("a fabric's params are checked by its kind, each problem at its path", async (t) => {
  const file = relative(process.cwd(), topologyPath('fat_tree_2l_16'));
  const where = (sets: string[]): string[][] => configError(() => loadTopology(file, sets)).problems.map((p) => [p.path, p.file]);
  t.same(where(['system.sips.count=6']), [['system.sips.count', '--set']], 'a count that is not a whole number of leaves');
  t.same(where(['system.sips.params.spine=3']), [['system.sips.params.spine', '--set']], 'an unknown key');
  t.same(where(['system.sips.params.oversubscription=0']), [['system.sips.params.oversubscription', '--set']], 'a bad value');
  const ring = relative(process.cwd(), topologyPath('ring_1d_6'));
  t.same(configError(() => loadTopology(ring, ['system.sips.params.spines=2'])).problems.map((p) => p.path), ['system.sips.params.spines'], 'a kind without params takes none');
  t.equal(configError(() => loadTopology(ring, ['system.sips.topology=star_1d'])).code, 'ERR_CONFIG');
});

const ALPHA = 1000;
const BETA = 100;
/** f32 elements per rank: divisible by every p below, so chunks are equal. */
const N_ELEM = 6144;

async function crit(kind: string, sets: string[], algorithm = 'ring_allreduce'): Promise<number> {
  const [r] = await rt.bench('ccl_allreduce', { algorithm, topology: 'ideal', dtype: 'f32', threads: 1, sets: [`system.sips.topology=${kind}`, ...sets, `ccl.n_elem=${N_ELEM}`] });
  if (!r.ok) throw new Error(r.lines.join(' | '));
  return r.critNs;
}

for (const p of [3, 8]) {
  const N = N_ELEM * 4;
  t.test(`ring all-reduce, p = ${p}: 2(p-1)(2 alpha + N/(p beta)) through a switch, 2(p-1)(alpha + N/(p beta)) fully connected`, async (t) => {
    const sw = await crit('single_switch', [`system.sips.count=${p}`]);
    const fc = await crit('fully_connected', [`system.sips.count=${p}`]);
    const steps = 2 * (p - 1);
    t.ok(Math.abs(sw - steps * (2 * ALPHA + N / (p * BETA))) <= (2 * steps) / 1000, `switch: ${sw} ns`);
    t.ok(Math.abs(fc - steps * (ALPHA + N / (p * BETA))) <= (2 * steps) / 1000, `fully connected: ${fc} ns`);
  });
}

t.test("a switch port is a shared link: two children's tiles into the root share its down port, its two replies its up port", async (t) => {
  // Tree all-reduce of 3 ranks: ranks 1 and 2 send N to 0 at once (down(0) shared: 2 alpha + 2N/beta),
  // then 0 sends N to each (up(0) shared: the same). Unshared, each leg is 2 alpha + N/beta.
  const N = N_ELEM * 4;
  const shared = await crit('single_switch', ['system.sips.count=3', 'timing.link_sharing=max_min'], 'tree_allreduce');
  const alone = await crit('single_switch', ['system.sips.count=3', 'timing.link_sharing=none'], 'tree_allreduce');
  t.same([shared, alone].map((x) => Math.round(x * 1000)), [2 * (2 * ALPHA + (2 * N) / BETA), 2 * (2 * ALPHA + N / BETA)].map((x) => Math.round(x * 1000)));
});

for (const [topology, count] of [
  ['fully_connected_6', 4],
  ['single_switch_8', 4],
  ['fat_tree_2l_16', 8],
] as const) {
  t.test(`${topology} (${count} SIPs): the ring all-reduce gives every rank the exact sum, with one crit_ns and digest on every thread layout`, async (t) => {
    const runs = [];
    for (const threads of [1, 'rank'] as const) {
      const [r] = await rt.bench('ccl_allreduce', { topology, threads, dtype: 'f32', sets: [`system.sips.count=${count}`, 'ccl.n_elem=301'] });
      runs.push({ ok: r.ok, critNs: r.critNs, digest: r.digest });
    }
    t.ok(runs[0].ok, 'correct data');
    t.same(runs[1], runs[0]);
  });
}

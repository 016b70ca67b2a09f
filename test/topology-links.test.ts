// Runs on: main thread (tap). Covers: the machine's physical links
// (lib/topology/links.ts) and the kinds' routes (lib/topology/define-kind.ts):
// every PE pair's route has today's hop count and class, its links connect,
// it is the same however often it is asked, a kind's own route equals the
// BFS fallback, and a kind without `route` still gets one; routes are plain
// arrays, not frozen (decision 0281).
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { bfsRoute, defineSipTopology, EAST, WEST } from '../lib/topology/define-kind.js';
import { sipKind, sipKinds } from '../lib/topology/kind-catalog.js';
import { memoRoutes } from '../lib/topology/fabric.js';
import { Links } from '../lib/topology/links.js';
import { Machine } from '../lib/topology/machine.js';

/** Machines of every kind on a few grids, with 2 x 2 cubes of 2 PEs (default.yaml's cube layout trimmed). */
function machines(): { name: string; m: Machine }[] {
  const grids: Record<string, string[][]> = {
    ring_1d: [['system.sips.count=1'], ['system.sips.count=2'], ['system.sips.count=5'], ['system.sips.count=8']],
    line_1d: [['system.sips.count=2'], ['system.sips.count=5']],
    torus_2d: [['system.sips.count=4', 'system.sips.w=2', 'system.sips.h=2'], ['system.sips.count=12', 'system.sips.w=4', 'system.sips.h=3'], ['system.sips.count=15', 'system.sips.w=3', 'system.sips.h=5']],
    mesh_2d_no_wrap: [['system.sips.count=6', 'system.sips.w=3', 'system.sips.h=2'], ['system.sips.count=12', 'system.sips.w=4', 'system.sips.h=3']],
    fully_connected: [['system.sips.count=2'], ['system.sips.count=4']],
    single_switch: [['system.sips.count=1'], ['system.sips.count=4']],
    fat_tree_2l: [['system.sips.count=6', 'system.sips.params.sips_per_leaf=2', 'system.sips.params.spines=3'], ['system.sips.count=8']],
  };
  const out: { name: string; m: Machine }[] = [];
  for (const [kind, list] of Object.entries(grids)) {
    for (const g of list) {
      const sets = [`system.sips.topology=${kind}`, ...g, 'sip.cube_mesh.w=3', 'sip.cube_mesh.h=2', 'cube.pe_layout.pe_per_corner=1'];
      out.push({ name: `${kind} ${g.join(' ')}`, m: new Machine(loadTopology(topologyPath('default'), sets)) });
    }
  }
  return out;
}

t.test('every shipped kind is covered by the grids below', async (t) => {
  const covered = new Set(machines().map((x) => x.m.sipKind));
  t.same([...covered].sort(), sipKinds().map((k) => k.name));
});

t.test("every PE pair's route has today's class and hop count, connects from the sender to the receiver, and is stable", async (t) => {
  for (const { name, m } of machines()) {
    const links = new Links(m);
    let bad = 0;
    for (let a = 0; a < m.totalPes; a++) {
      for (let b = 0; b < m.totalPes; b++) {
        const r = links.route(a, b);
        if (a === b) {
          if (r.length !== 0) bad++;
          continue;
        }
        const today = m.route(a, b);
        if (r.length !== today.hops || r.some((l) => links.classOf(l) !== today.link)) bad++;
        // Consecutive links connect: each starts where the last ended, from a's node to b's.
        const A = m.coord(a), B = m.coord(b);
        const [from, to] = today.link === 'sip_sip' ? [A.sip, B.sip] : today.link === 'cube_cube' ? [A.sip * m.cubesPerSip + A.cube, B.sip * m.cubesPerSip + B.cube] : [a, b];
        let at = from;
        for (const l of r) {
          const e = links.ends(l);
          if (e.from !== at || e.to < 0 || l < 0 || l >= links.count) bad++;
          at = e.to;
        }
        if (at !== to) bad++;
        // Same answer from a fresh table (no state in the route).
        if (new Links(m).route(a, b).join() !== r.join()) bad++;
      }
    }
    t.equal(bad, 0, name);
  }
});

t.test("a shipped direction kind's route is the BFS fallback's (dimension order, ties to the lower direction)", async (t) => {
  for (const { name, m } of machines().filter((x) => !x.m.sipTopology.fabric)) {
    const k = m.sipTopology;
    let bad = 0;
    for (let a = 0; a < m.sips; a++) {
      for (let b = 0; b < m.sips; b++) {
        if (k.route?.(a, b, m.sipGrid).join() !== bfsRoute(k, a, b, m.sipGrid)?.join()) bad++;
      }
    }
    t.equal(bad, 0, name);
  }
});

t.test('the tie on an even ring goes east, on an even torus column north', async (t) => {
  const ring = new Machine(loadTopology(topologyPath('default'), ['system.sips.count=4']));
  const k = ring.sipTopology;
  t.same(k.route?.(0, 2, ring.sipGrid), [EAST, EAST]);
  t.same(k.route?.(2, 0, ring.sipGrid), [EAST, EAST]);
  t.same(k.route?.(3, 0, ring.sipGrid), [EAST]);
  t.same(k.route?.(0, 3, ring.sipGrid), [WEST]);
  const torus = new Machine(loadTopology(topologyPath('default'), ['system.sips.topology=torus_2d', 'system.sips.count=16', 'system.sips.w=4', 'system.sips.h=4']));
  // (0, 0) -> (2, 2): x ties east, y ties north (the lower direction index).
  t.same(torus.sipTopology.route?.(0, 10, torus.sipGrid), [0, 0, 2, 2]);
});

t.test('a PE coordinate outside the machine is refused with ERR_NO_SUCH_PE', async (t) => {
  const m = new Machine(loadTopology(topologyPath('default'), ['system.sips.count=2']));
  t.throws(() => m.peId({ sip: 2, cube: 0, pe: 0 }), { code: 'ERR_NO_SUCH_PE' });
  t.throws(() => m.peId({ sip: 0, cube: m.cubesPerSip, pe: 0 }), { code: 'ERR_NO_SUCH_PE' });
});

t.test('a kind without route gets the BFS route over its neighbours', async (t) => {
  const ring = sipKinds().find((k) => k.name === 'ring_1d');
  if (!ring) throw new Error('no ring_1d');
  const bare = defineSipTopology({ name: 'bare_ring', summary: 'a ring without route', grid: ring.grid, hops: ring.hops, neighbour: ring.neighbour });
  t.equal(bare.route, undefined);
  const grid = { w: 7, h: 1 };
  for (let a = 0; a < 7; a++) for (let b = 0; b < 7; b++) t.same(bfsRoute(bare, a, b, grid), ring.route?.(a, b, grid), `${a} -> ${b}`);
});

t.test('a route that is not a function is refused with ERR_MODULE_DEFINITION', async (t) => {
  const ring = sipKind('ring_1d');
  t.throws(() => defineSipTopology({ ...ring, name: 'odd_kind', route: 3 as unknown as () => number[] }), { code: 'ERR_MODULE_DEFINITION' });
});

t.test('link ids are dense: every id below count decodes, and each used link is on some route', async (t) => {
  const m = new Machine(loadTopology(topologyPath('default'), ['system.sips.count=3']));
  const links = new Links(m);
  const used = new Set<number>();
  for (let a = 0; a < m.totalPes; a++) for (let b = 0; b < m.totalPes; b++) for (const l of links.route(a, b)) used.add(l);
  let real = 0;
  for (let id = 0; id < links.count; id++) if (links.ends(id).to >= 0) real++;
  t.equal(used.size, real);
  t.ok(Math.max(...used) < links.count);
});

// Decision 0281: optimised code on Node 20's V8 reads a frozen array's elements through a
// generic call, and the reach check reads a route's links for every piece.
t.test('routes are plain arrays, not frozen, and a fabric keeps its own copy of a kind\'s route', async (t) => {
  const m = new Machine(loadTopology(topologyPath('default'), ['system.sips.count=4']));
  const links = new Links(m);
  const r = links.route(0, m.totalPes - 1);
  t.ok(r.length > 0, 'a route with links');
  t.notOk(Object.isFrozen(r), 'Links.route: not frozen');
  t.equal(links.route(0, m.totalPes - 1), r, 'and the same array when asked again');
  const theirs = [1, 2, 3];
  const memo = memoRoutes(4, () => theirs);
  const kept = memo(0, 1);
  t.notOk(Object.isFrozen(kept), 'memoRoutes: not frozen');
  theirs[0] = 99;
  t.same(memo(0, 1), [1, 2, 3], "the memo's route does not change with the kind's array");
});

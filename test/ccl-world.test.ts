// How collectives arrange their ranks: the tree world's direction mapping,
// address matching on it, the registry of algorithm modules, and the
// configuration errors of a world that does not fit the topology.
import t from 'tap';
import { loadCclFile } from '../lib/config/load.js';
import { DEFAULT_CCL_FILE } from '../lib/config/paths.js';
import { ALGORITHM_MODULES, arrangementOf } from '../lib/ccl/registry.js';
import { neighbourRank, recvSource, type World } from '../lib/ccl/world.js';
import { DIRECTIONS } from '../lib/shm/layout.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

const tree6: World = { kind: 'tree', w: 6, h: 1, pes: [10, 11, 12, 13, 14, 15] };

t.test('a tree world of 6 ranks: north is the parent, east and west the children, south nothing', async (t) => {
  const table = Array.from({ length: 6 }, (_, r) => DIRECTIONS.map((_, d) => neighbourRank(tree6, r, d)));
  // rank: [east, west, north, south]
  t.same(table, [
    [1, 2, -1, -1],
    [3, 4, 0, -1],
    [5, -1, 0, -1],
    [-1, -1, 1, -1],
    [-1, -1, 1, -1],
    [-1, -1, 2, -1],
  ]);
});

t.test('in a tree world each receive resolves to the ring the peer sends on: parent sends east/west, child sends north', async (t) => {
  const seen = [];
  for (let r = 1; r < 6; r++) {
    const parent = (r - 1) >> 1;
    const childDir = r % 2 === 1 ? 0 : 1;
    seen.push({ r, fromParent: recvSource(tree6, r, 2), fromChild: recvSource(tree6, parent, childDir) });
  }
  t.same(
    seen,
    [1, 2, 3, 4, 5].map((r) => ({ r, fromParent: { pe: 10 + ((r - 1) >> 1), dir: r % 2 === 1 ? 0 : 1 }, fromChild: { pe: 10 + r, dir: 2 } })),
  );
});

t.test('a receive from a direction with no neighbour is refused with the direction', async (t) => {
  t.throws(() => recvSource(tree6, 3, 0), { code: 'ERR_INVALID_ARG', message: /no east neighbour in a tree world/ });
});

t.test('every ccl.yaml entry names a registered module that accepts its topology', async (t) => {
  const file = loadCclFile(DEFAULT_CCL_FILE);
  const bad = Object.entries(file.algorithms).flatMap(([name, e]) => {
    if (!(e.module in ALGORITHM_MODULES)) return [`${name}: unknown module ${e.module}`];
    try {
      arrangementOf(e.module, e.topology);
      return [];
    } catch (err) {
      return [`${name}: ${(err as Error).message}`];
    }
  });
  t.same(bad, []);
});

const configErrors = [
  { name: 'a 2-D algorithm on a ring_1d topology (no SIP grid)', over: { topology: 'ring_1d_6', algorithm: 'mesh_allreduce' }, message: /torus_2d arrangement takes its w x h grid.*got a ring_1d topology of 6 SIPs/ },
  { name: 'a 2-D algorithm whose world size is not w x h', over: { topology: 'torus_2d_2x3', algorithm: 'mesh_allreduce' }, message: /needs world size = w x h = 2 x 3 = 6.*got world size 1/ },
  { name: 'the ring on a 2-D logical topology', over: { topology: 'torus_2d_2x3', sets: ['ccl.topology=torus_2d'] }, message: /'ring_allreduce' arranges ranks as ring_1d.*got 'torus_2d'/ },
  { name: 'a point-to-point module used as an all-reduce', over: { algorithm: 'hello_send' }, message: /'hello_send' is not an all-reduce/ },
];
for (const c of configErrors) {
  t.test(`allReduce refuses ${c.name} with ERR_CONFIG`, async (t) => {
    await rt.session({ threads: 1, ...c.over }, async (torch) => {
      await torch.distributed.initProcessGroup({ backend: 'ahbm' });
      await t.rejects(torch.distributed.allReduce(torch.zeros([4])), { code: 'ERR_CONFIG', message: c.message });
    });
  });
}

// How collectives arrange their ranks: the tree world's direction mapping,
// address matching on it, and the errors of a world that only the running
// program can get wrong (a configuration that does not fit its topology is
// refused before the run: ccl-resolve.test.ts).
import t from 'tap';
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
  t.throws(() => recvSource(tree6, 3, 0), { code: 'ERR_NO_NEIGHBOUR', message: /no east neighbour in a tree world/ });
});

const configErrors = [
  { name: 'a 2-D algorithm whose group (1 rank, no spawn) is not w x h', over: { topology: 'torus_2d_2x3', algorithm: 'mesh_allreduce' }, code: 'ERR_CCL_ARRANGEMENT', message: /needs world size = w x h = 2 x 3 = 6.*got world size 1/ },
  { name: 'a point-to-point module used as an all-reduce', over: { algorithm: 'hello_send' }, code: 'ERR_WRONG_ALGORITHM', message: /'hello_send' is not an all-reduce/ },
];
for (const c of configErrors) {
  t.test(`allReduce refuses ${c.name} with ${c.code}`, async (t) => {
    await rt.session({ threads: 1, ...c.over }, async (torch) => {
      await torch.distributed.initProcessGroup({ backend: 'ahbm' });
      await t.rejects(torch.distributed.allReduce(torch.zeros([4])), { code: c.code, message: c.message });
    });
  });
}

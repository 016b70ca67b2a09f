// How collectives arrange their ranks: the tree world's direction mapping,
// address matching on it, and the errors of a world that only the running
// program can get wrong (a configuration that does not fit its topology is
// refused before the run: ccl-resolve.test.ts).
import t from 'tap';
import { neighbourRank, portsOf, recvSource, type World } from '../lib/ccl/world.js';
import { DIRECTIONS } from '../lib/shm/layout.js';
import { TestRuntime } from './helpers/run.js';
import { placeCollective } from '../lib/ccl/placement.js';
import { ProcessGroup } from '../lib/ccl/process-group.js';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { Machine } from '../lib/topology/machine.js';
import { tabulate } from '../lib/tabulate.js';
import { launchPorts } from '../lib/host/host-runtime.js';
import { portOf } from '../lib/kernel/ports.js';

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

t.test("a port table carries no error message: a missing neighbour's is worded when the port is used, as the host worded it", async (t) => {
  const ring: World = { kind: 'ring_1d', w: 1024, h: 1, pes: Array.from({ length: 1024 }, (_, r) => r) };
  const ports = portsOf(ring, 7);
  // Every rank's launch command carries its table, and its kernel keeps it: two messages of ~100 bytes were most of it.
  t.ok(JSON.stringify({ send: ports.send, recv: ports.recv, why: ports.why }).length < 320, `a ring rank's table is small: ${JSON.stringify(ports)}`);
  t.notOk(ports.send.some((p) => 'message' in p), 'no message in the table');
  t.throws(() => recvSource(ring, 7, 2), { code: 'ERR_NO_NEIGHBOUR', message: "CCL rank 7 has no north neighbour in a ring_1d world of 1024x1, got direction 'north'" });
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

t.test('initProcessGroup with no options joins with the one backend, as PyTorch picks a default; an unknown backend is refused', async (t) => {
  await rt.session({ threads: 1 }, async (torch) => {
    await t.rejects(torch.distributed.initProcessGroup({ backend: 'nccl' }), { code: 'ERR_INVALID_ARG_VALUE' });
    await torch.distributed.initProcessGroup();
    t.ok(torch.distributed.isInitialized(), 'initialised');
    await t.rejects(torch.distributed.initProcessGroup(), { code: 'ERR_ALREADY_INITIALIZED', message: /backend 'ahbm'/ });
  });
});

t.test("every rank of a thread places a flat world on one list of PEs, not a list each (p^2 numbers a thread; decision 0127)", async (t) => {
  const m = new Machine(loadTopology(topologyPath('ideal'), ['system.sips.count=8']));
  const world = new ProcessGroup([0, 1, 2, 3, 4, 5, 6, 7], 8);
  const place = (me: number, group = world) => placeCollective(m, 'all_reduce', [{ cube: 0, pe: 0 }], group, me, { kind: 'ring' });
  const a = place(0).worlds[0];
  const b = place(5, new ProcessGroup([0, 1, 2, 3, 4, 5, 6, 7], 8)).worlds[0];
  t.same(a.pes, tabulate(8, (sip) => m.peId({ sip, cube: 0, pe: 0 })), "the world's PEs, rank by rank");
  t.equal(b.pes, a.pes, 'one list for every rank of the world group on this thread');
  t.not(place(0, new ProcessGroup([1, 3], 8)).worlds[0].pes, a.pes, 'another group has its own');
  // Handed over with a launch's ports onto the thread's own PE, and read a message by a peer's
  // send: not frozen, since V8 reads a frozen array's elements through a generic call (decisions 0281, 0283).
  t.notOk(Object.isFrozen(a.pes), 'not frozen');
});

t.test("a rank's placement is made once for the same group, rank, arrangement and shard positions, and anew for any other (decision 0285)", async (t) => {
  const m = new Machine(loadTopology(topologyPath('ideal'), ['system.sips.count=8']));
  const world = new ProcessGroup([0, 1, 2, 3, 4, 5, 6, 7], 8);
  const at = [{ cube: 0, pe: 0 }];
  const first = placeCollective(m, 'all_reduce', at, world, 2, { kind: 'ring' });
  t.equal(placeCollective(m, 'broadcast', [{ cube: 0, pe: 0 }], world, 2, { kind: 'ring' }), first, 'the same placement again, for another call with the same inputs');
  const other = placeCollective(m, 'all_reduce', at, world, 3, { kind: 'ring' });
  t.not(other, first, 'another rank: its own');
  t.same(other.pes, [m.peId({ sip: 3, cube: 0, pe: 0 })], "and that rank's PE");
  t.not(placeCollective(m, 'all_reduce', at, world, 2, { kind: 'tree' }), first, 'another arrangement: its own');
  // What an arrangement holds besides its kind is part of the key too (decision 0289's key, not JSON's).
  const corner = placeCollective(m, 'all_reduce', at, world, 2, { kind: 'hierarchical', root: 'corner' });
  t.equal(placeCollective(m, 'all_reduce', at, world, 2, { kind: 'hierarchical', root: 'corner' }), corner, 'the same hierarchical arrangement (another object): the same');
  t.not(placeCollective(m, 'all_reduce', at, world, 2, { kind: 'hierarchical', root: 'center' }), corner, 'another root: its own');
  const line = placeCollective(m, 'all_reduce', at, world, 2, { kind: 'logical', topology: 'line_1d' });
  t.not(placeCollective(m, 'all_reduce', at, world, 2, { kind: 'logical', topology: 'ring_1d' }), line, 'another logical topology: its own');
  t.not(placeCollective(m, 'all_reduce', at, new ProcessGroup([0, 1, 2, 3, 4, 5, 6, 7], 8), 2, { kind: 'ring' }), first, 'another group object: its own');
  const m2 = new Machine(loadTopology(topologyPath('ideal'), ['system.sips.count=8']));
  t.not(placeCollective(m2, 'all_reduce', at, world, 2, { kind: 'ring' }), first, 'another machine: its own');
  for (let i = 0; i < 2; i++) t.throws(() => placeCollective(m, 'all_reduce', [at[0], at[0]], world, 2, { kind: 'ring' }), { code: 'ERR_SHARED_PE' }, `two shards on one PE: refused (call ${i + 1})`);
});

t.test("a launch's port table is made once for the same world, rank, declared sends, kernel and peer addressing, and anew for any other (decision 0288)", async (t) => {
  const ring: World = { kind: 'ring_1d', w: 8, h: 1, pes: Array.from({ length: 8 }, (_, r) => 20 + r) };
  const east = [DIRECTIONS.indexOf('east')];
  const plain = launchPorts('k', ring, 3, undefined, false);
  t.same(plain, portsOf(ring, 3), 'without declared sends: the world\'s table');
  t.equal(launchPorts('k', ring, 3, undefined, false), plain, 'the same table again');
  t.equal(launchPorts('other', ring, 3, undefined, false), plain, "a kernel's name does not change a table without declared sends");
  const eastOnly = launchPorts('ring_step', ring, 3, east, false);
  t.equal(launchPorts('ring_step', ring, 3, [...east], false), eastOnly, 'the same declared sends (another array) give it again');
  t.same(portOf(eastOnly.send, 0, eastOnly.why), { pe: 24, dir: 0 }, 'the declared direction sends');
  t.throws(() => portOf(eastOnly.send, 1, eastOnly.why), { code: 'ERR_SEND_UNDECLARED', message: /ring_step/ }, 'an undeclared one is refused, naming the kernel');
  t.same(portOf(eastOnly.recv, 1, eastOnly.why), portOf(plain.recv, 1, plain.why), 'its receive port stays');
  t.same(portOf(plain.send, 1, plain.why), { pe: 22, dir: 1 }, 'the table without declared sends is not changed by it');
  const renamed = launchPorts('ring_step_2', ring, 3, east, false);
  t.not(renamed, eastOnly, 'another kernel gets its own (its errors name it)');
  t.throws(() => portOf(renamed.send, 1, renamed.why), { message: /ring_step_2/ });
  const peers = launchPorts('k', ring, 3, undefined, true);
  t.not(peers, plain, 'peer addressing gets its own');
  t.equal(peers.pes, ring.pes, "with the world's PEs");
  t.equal(plain.pes, undefined, 'which the other has not');
  t.not(launchPorts('k', ring, 4, undefined, false), plain, 'another rank gets its own');
  t.not(launchPorts('k', { ...ring }, 3, undefined, false), plain, 'another world gets its own');
});


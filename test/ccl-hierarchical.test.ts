// The hierarchical all-reduce (PE -> cube -> SIP, seed ADR-0029; centre root,
// ADR-0032): the wiring of each SIP's PEs (lib/ccl/hierarchy.ts) and the
// collective on tensors sharded over several cubes and PEs per SIP, where
// every shard is one participant.
import t from 'tap';
import { hierarchyPlan, RING_NEXT, RING_PREV, type HierarchyLevels } from '../lib/ccl/hierarchy.js';
import { REDUCE_OPS } from '../lib/ccl/reduce-op.js';
import { recvSource, type World } from '../lib/ccl/world.js';
import { CCL_FIXTURES, allReduceWorker, expectedAllReduce, everyRank } from './fixtures/ccl.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());

/** The default topology's layout: a 2x2 cube mesh, 4 PEs per cube, every PE holding a shard. */
const DEFAULT_LEVELS = (root: 'corner' | 'center'): HierarchyLevels => ({ cubeOf: [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3], cubeMesh: { w: 2, h: 2 }, root });
const MESH_3X3 = (root: 'corner' | 'center', pes: number): HierarchyLevels => ({ cubeOf: Array.from({ length: 9 * pes }, (_, i) => Math.floor(i / pes)), cubeMesh: { w: 3, h: 3 }, root });

t.test('the corner root is the first cube and the centre root of a 3x3 mesh is cube 4', async (t) => {
  t.same(
    [hierarchyPlan(DEFAULT_LEVELS('corner'), 2).rootCube, hierarchyPlan(MESH_3X3('corner', 1), 2).rootCube, hierarchyPlan(MESH_3X3('center', 1), 2).rootCube],
    [0, 0, 4],
  );
});

t.test("each SIP's PEs form one tree under the gateway, with symmetric links and at most four per PE", async (t) => {
  const problems: string[] = [];
  for (const [name, levels, sips] of [
    ['default, 2 SIPs', DEFAULT_LEVELS('corner'), 2],
    ['default, 1 SIP', DEFAULT_LEVELS('center'), 1],
    ['3x3 x 4 PEs, centre', MESH_3X3('center', 4), 3],
    ['3x3 x 1 PE, centre', MESH_3X3('center', 1), 2],
  ] as const) {
    const plan = hierarchyPlan(levels, sips);
    const L = levels.cubeOf.length;
    if (levels.cubeOf[plan.gateway] !== plan.rootCube) problems.push(`${name}: gateway outside the root cube`);
    for (let i = 0; i < L; i++) {
      plan.neighbours[i].forEach((nb, d) => {
        if (nb >= 0 && !plan.neighbours[nb].includes(i)) problems.push(`${name}: link ${i} -> ${nb} (dir ${d}) has no way back`);
        if ((nb === RING_NEXT || nb === RING_PREV) && (i !== plan.gateway || sips === 1)) problems.push(`${name}: PE ${i} is on the SIP ring`);
      });
      let hops = 0;
      for (let j = i; j !== plan.gateway; j = plan.parent[j]) if (++hops > L) problems.push(`${name}: PE ${i} never reaches the gateway`);
    }
  }
  t.same(problems, []);
});

t.test('every link of a hierarchical world resolves to the one ring its peer sends on (address matching)', async (t) => {
  const levels = DEFAULT_LEVELS('corner');
  const world: World = { kind: 'hierarchical', w: 16, h: 2, levels, pes: Array.from({ length: 32 }, (_, i) => 100 + i) };
  const plan = hierarchyPlan(levels, 2);
  const wrong: string[] = [];
  for (let rank = 0; rank < 32; rank++) {
    const local = rank % 16;
    plan.children[local].forEach((c) => {
      const src = recvSource(world, rank, c.dir);
      if (src.pe !== 100 + rank - local + c.local || src.dir !== plan.parentDir[c.local]) wrong.push(`rank ${rank} from child ${c.local}`);
    });
  }
  t.same(wrong, []);
});

const participants = (sips: number, L: number) => () => Array.from({ length: sips * L }, (_, i): [number, number] => [Math.floor(i / L), i % L]);

for (const algorithm of ['hierarchical_allreduce', 'hierarchical_allreduce_center']) {
  t.test(`${algorithm} on the default topology (2 SIPs x 4 cubes x 4 PEs): every shard holds the reduction over all 32 shards, for every op`, async (t) => {
    const seen: Record<string, boolean> = {};
    for (const op of REDUCE_OPS) {
      const r = await rt.session({ algorithm, threads: 1 }, (torch) =>
        torch.multiprocessing.spawn(allReduceWorker, { args: [{ nElem: 24, dtype: 'f16', op, numCubes: 4, numPes: 4 }], nprocs: 2 }),
      );
      const expected = expectedAllReduce(op, 'f16', 24, 16, participants(2, 16));
      seen[op] = everyRank(r.value).every((v) => JSON.stringify(v.values) === JSON.stringify(expected));
    }
    t.same(seen, Object.fromEntries(REDUCE_OPS.map((op) => [op, true])));
  });
}

t.test('three SIPs of 2 cubes x 2 PEs: the gateways ring carries the SIP partials (12 participants, f32)', async (t) => {
  const sets = ['sip.cube_mesh.w=2', 'cube.pe_layout.pe_per_corner=2'];
  const r = await rt.session({ algorithm: 'hierarchical_allreduce', topology: 'ring_1d_6', threads: 1, sets }, (torch) =>
    torch.multiprocessing.spawn(allReduceWorker, { args: [{ nElem: 101, dtype: 'f32', op: 'sum', numCubes: 2, numPes: 2 }], nprocs: 3 }),
  );
  const expected = expectedAllReduce('sum', 'f32', 101, 4, participants(3, 4));
  t.same(
    everyRank(r.value).map((v) => v.values),
    [expected, expected, expected],
  );
});

t.test('on a 3x3 cube mesh the centre root is faster than the corner root (fewer cube_cube hops)', async (t) => {
  const sets = ['sip.cube_mesh.w=3', 'sip.cube_mesh.h=3'];
  const crit: Record<string, number> = {};
  for (const algorithm of ['hierarchical_allreduce', 'hierarchical_allreduce_center']) {
    for (const numPes of [1, 4]) {
      const r = await rt.session({ algorithm, threads: 1, sets }, (torch) =>
        torch.multiprocessing.spawn(allReduceWorker, { args: [{ nElem: 256, dtype: 'f16', op: 'sum', numCubes: 9, numPes }], nprocs: 2 }),
      );
      crit[`${algorithm}/${numPes}`] = Math.max(...everyRank(r.value).map((v) => v.critNs));
    }
  }
  t.comment(JSON.stringify(crit));
  t.ok(crit['hierarchical_allreduce_center/1'] < crit['hierarchical_allreduce/1'], '9 cubes x 1 PE');
  t.ok(crit['hierarchical_allreduce_center/4'] < crit['hierarchical_allreduce/4'], '9 cubes x 4 PEs');
});

t.test('the same run gives the same data and crit_ns under --threads 1, rank, pe and jitter', async (t) => {
  // 2 SIPs x 2 cubes x 2 PEs: small, so --threads pe starts only 8 threads.
  const sets = ['system.sips.count=2', 'sip.cube_mesh.w=2', 'cube.pe_layout.pe_per_corner=2'];
  const run = async (over: { threads: 1 | 'rank' | 'pe'; jitterSeed: number | null }) => {
    const r = await rt.session({ algorithm: 'hierarchical_allreduce_center', topology: 'ring_1d_6', sets, ...over }, (torch) =>
      torch.multiprocessing.spawn(allReduceWorker, { args: [{ nElem: 50, dtype: 'bf16', op: 'max', numCubes: 2, numPes: 2 }], nprocs: 2 }),
    );
    return { value: r.value, digest: r.digest };
  };
  const ref = await run({ threads: 1, jitterSeed: null });
  const layouts = [
    { threads: 'rank' as const, jitterSeed: null },
    { threads: 'pe' as const, jitterSeed: null },
    { threads: 'pe' as const, jitterSeed: 5 },
  ];
  const seen = [];
  for (const l of layouts) seen.push(await run(l));
  t.same(
    seen,
    layouts.map(() => ref),
  );
});

// The determinism contract (DESIGN §4) for every collective beyond the
// all-reduce bench: broadcast, allGather, reduceScatter, an all-reduce on a
// subgroup and a subgroup barrier give bit-identical data, PE virtual times
// (the session digest) and crit_ns under --threads 1, rank, pe and jitter.
// (All-reduce algorithms: ccl-matrix.test.ts and ccl-hierarchical.test.ts.)
import t from 'tap';
import { CCL_FIXTURES, allReduceWorker, collectiveWorker, lateBarrierWorker, type CollectiveCase } from './fixtures/ccl.js';
import type { Torch } from '../lib/host/torch.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());

const LAYOUTS = [
  { threads: 'rank' as const, jitterSeed: null },
  { threads: 'pe' as const, jitterSeed: null },
  { threads: 'rank' as const, jitterSeed: 3 },
  { threads: 1 as const, jitterSeed: 8 },
];

type Job = (torch: Torch) => Promise<unknown>;

const jobs: { name: string; job: Job }[] = [
  ...(
    [
      { kind: 'broadcast', nElem: 301, dtype: 'f16', src: 2 },
      { kind: 'allGather', nElem: 77, dtype: 'bf16' },
      { kind: 'reduceScatter', nElem: 61, dtype: 'f32', op: 'avg' },
    ] satisfies CollectiveCase[]
  ).map((c) => ({ name: c.kind, job: (torch: Torch) => torch.multiprocessing.spawn(collectiveWorker, { args: [c], nprocs: 5 }) })),
  { name: 'allReduce on newGroup([0, 2, 3, 5])', job: (torch) => torch.multiprocessing.spawn(allReduceWorker, { args: [{ nElem: 200, dtype: 'f16', op: 'max', group: [0, 2, 3, 5] }], nprocs: 6 }) },
  { name: 'barrier on newGroup([1, 2, 4])', job: (torch) => torch.multiprocessing.spawn(lateBarrierWorker, { args: [[1, 2, 4], 2, 1234], nprocs: 6 }) },
];

for (const { name, job } of jobs) {
  t.test(`${name}: same data, digest and crit_ns under --threads 1, rank, pe and jitter`, async (t) => {
    const run = async (over: { threads: 1 | 'rank' | 'pe'; jitterSeed: number | null }) => {
      const r = await rt.session({ topology: 'ring_1d_6', ...over }, job);
      return { value: r.value, digest: r.digest };
    };
    const ref = await run({ threads: 1, jitterSeed: null });
    const seen = [];
    for (const l of LAYOUTS) seen.push({ layout: `${l.threads}/${l.jitterSeed}`, ...(await run(l)) });
    t.same(
      seen,
      LAYOUTS.map((l) => ({ layout: `${l.threads}/${l.jitterSeed}`, ...ref })),
    );
  });
}

// The determinism contract for the partner-based collectives
// (docs/algorithms/partners.md): with every call of mixWorker (allReduce, allToAllSingle,
// reduce, gather, scatter) on modules that address peers, one digest of the
// data and one crit_ns per call and rank under --threads 1, 2, rank, pe and
// jitter, compared between real runs.
import { createHash } from 'node:crypto';
import t from 'tap';
import { CCL_FIXTURES } from './fixtures/ccl.js';
import { mixWorker, PARTNER_FIXTURES } from './fixtures/ccl-partners.js';
import { PEERS } from './helpers/all-to-all.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES, PARTNER_FIXTURES] });
t.teardown(() => rt.close());

t.test('one digest and one crit_ns per call under --threads 1, 2, rank, pe and jitter, for every partner module (p = 6, realistic timing)', async (t) => {
  const layouts = [
    { threads: 1, jitterSeed: null },
    { threads: 2, jitterSeed: null },
    { threads: 'rank', jitterSeed: null },
    { threads: 'pe', jitterSeed: null },
    { threads: 2, jitterSeed: 5 },
  ] as const;
  for (const [allReduce, allToAll] of [
    ['rabenseifner_allreduce', 'bruck_alltoall'],
    ['recursive_doubling_allreduce', 'pairwise_alltoall'],
  ]) {
    const seen = [];
    for (const l of layouts) {
      const sets = [`ccl.module=${allReduce}`, `ccl.collectives.all_to_all.module=${allToAll}`, ...PEERS(6)];
      const r = await rt.session({ topology: 'fully_connected_6', ...l, sets }, (torch) => torch.multiprocessing.spawn(mixWorker, { args: [40], nprocs: 6 }));
      seen.push({ digest: createHash('sha256').update(JSON.stringify(r.value.map((v) => v.values))).digest('hex').slice(0, 16), critNs: r.value.map((v) => v.critNs) });
    }
    for (let i = 1; i < seen.length; i++) t.same(seen[i], seen[0], `${allReduce} + ${allToAll}: threads ${layouts[i].threads}${layouts[i].jitterSeed === null ? '' : ', jitter'} as threads 1`);
  }
});

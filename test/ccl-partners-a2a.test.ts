// Bruck's and the pairwise all-to-all picked by ccl.yaml's
// collectives.all_to_all (docs/algorithms/partners.md, "Choosing an algorithm"):
// allToAllSingle moves the blocks for every dtype, on the world and on a
// subgroup; the expected blocks are computed here from the inputs.
import t from 'tap';
import { DTYPES } from '../lib/dtype/dtypes.js';
import { a2aSplitWorker, CCL_FIXTURES, collectiveWorker, everyRank, type CollectiveCase, type RankView } from './fixtures/ccl.js';
import { expected, PEERS, range } from './helpers/all-to-all.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());

const values = (views: (RankView | null)[]) => views.map((v) => (v ? v.values : null));

for (const module of ['bruck_alltoall', 'pairwise_alltoall']) {
  t.test(`ccl.yaml collectives.all_to_all = ${module}: allToAllSingle moves the blocks for every dtype, at 3, 4 and 6 ranks and on a subgroup`, async (t) => {
    const sets = [`ccl.collectives.all_to_all.module=${module}`, ...PEERS(6)];
    const wrong: string[] = [];
    for (const p of [3, 4, 6]) {
      for (const dtype of p === 4 ? (['f32'] as const) : DTYPES) {
        const n = 3;
        const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets }, (torch) => torch.multiprocessing.spawn(collectiveWorker, { args: [{ kind: 'allToAllSingle', nElem: n, dtype } satisfies CollectiveCase], nprocs: p }));
        if (JSON.stringify(everyRank(r.value).map((v) => v.values)) !== JSON.stringify(range(p, (q) => expected(range(p, (i) => i), q, n)))) wrong.push(`p=${p} ${dtype}`);
      }
    }
    t.same(wrong, [], 'cases with a wrong result');
    const sub = await rt.session({ topology: 'ring_1d_6', threads: 1, sets }, (torch) =>
      torch.multiprocessing.spawn(collectiveWorker, { args: [{ kind: 'allToAllSingle', nElem: 2, dtype: 'bf16', group: [5, 0, 2, 3, 4] } satisfies CollectiveCase], nprocs: 6 }),
    );
    const members = [0, 2, 3, 4, 5];
    t.same(values(sub.value), range(6, (r) => (members.includes(r) ? expected(members, members.indexOf(r), 2) : null)));
  });
}


t.test('uneven splits to an even-only module (bruck_alltoall) are ERR_UNEVEN_SPLIT before any launch; even ones given explicitly run', async (t) => {
  const codes = [];
  for (const splits of [[2, 4], [3, 3]]) {
    const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: ['ccl.collectives.all_to_all.module=bruck_alltoall', ...PEERS(2)] }, (torch) => torch.multiprocessing.spawn(a2aSplitWorker, { args: [splits], nprocs: 2 }));
    codes.push(r.value);
  }
  t.same(codes, [
    ['ERR_UNEVEN_SPLIT', 'ERR_UNEVEN_SPLIT'],
    ['none', 'none'],
  ]);
});

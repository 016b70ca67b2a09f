// Runs on: main thread (tap). Covers: decision 0232, an executor's nursery in a pool
// of many threads. --threads rank's isolates, one rank each, get 1 MiB semi-spaces;
// a pool of one keeps 4 MiB. Counts what each rank's nursery committed (V8's heap
// space statistics) after allocating short-lived objects, not the process's RSS.
import t from 'tap';
import { semiSpaceMb } from '../lib/session/thread-flags.js';
import { TestRuntime } from './helpers/run.js';
import { NURSERY_RANK, nurseryRank } from './fixtures/nursery-rank.js';

const MiB = 1 << 20;
const P = 16;

t.test('the nursery half is the pool\'s share: 4 MiB for a few executors, 1 MiB for many', async (t) => {
  t.equal(semiSpaceMb(1), 4);
  t.equal(semiSpaceMb(4), 4);
  t.equal(semiSpaceMb(8), 2);
  t.equal(semiSpaceMb(P), 1);
  t.equal(semiSpaceMb(1024), 1);
});

for (const [threads, most] of [['rank', 2 * semiSpaceMb(P)], [1, 2 * semiSpaceMb(1)]] as const) {
  t.test(`--threads ${threads}: a rank's nursery commits at most two ${most / 2} MiB halves, and grows to more than one`, async (t) => {
    // Threads of its own (epochGc given): a pool sized by this run alone.
    const rt = new TestRuntime({ modules: [NURSERY_RANK], epochGc: false });
    t.teardown(() => rt.close());
    const r = await rt.session({ topology: 'ideal', threads, noData: true, sets: [`system.sips.count=${P}`] }, (torch) => torch.multiprocessing.spawn(nurseryRank, { args: [], nprocs: P }));
    const largest = Math.max(...r.value);
    t.ok(largest <= most * MiB, `largest nursery ${(largest / MiB).toFixed(1)} MiB, at most ${most} MiB`);
    t.ok(largest > (most / 2) * MiB, `grown past one half: ${(largest / MiB).toFixed(1)} MiB`);
  });
}

// Runs on: main thread (tap). Covers: decision 0232, an executor's nursery in a pool
// of many threads. --threads rank's isolates, one rank each, get 1 MiB semi-spaces;
// a pool of one keeps 4 MiB. Counts what each rank's nursery committed (V8's heap
// space statistics) after allocating short-lived objects, not the process's RSS.
// And decision 0246: a pool started for a session of 256 ranks or more shares one
// executor's nursery and gets no old-space floor; a smaller session's pool keeps both.
// And decision 0247: such a pool on more threads than cores optimises on its own threads.
import v8 from 'node:v8';
import t from 'tap';
import { availableParallelism } from 'node:os';
import { concurrentCompile, LARGE_SESSION_RANKS, oldSpaceFloorMb, semiSpaceMb } from '../lib/session/thread-flags.js';
import { ThreadResources } from '../lib/session/thread-resources.js';
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

t.test('a pool for a session of 256 ranks or more shares one executor\'s nursery and has no old-space floor', async (t) => {
  t.equal(LARGE_SESSION_RANKS, 256);
  t.equal(semiSpaceMb(1, 1024), 4, 'one executor: 4 MiB halves, as for a small session');
  t.equal(semiSpaceMb(2, 1024), 2, 'two share 4 MiB');
  t.equal(semiSpaceMb(4, 1024), 1);
  t.equal(semiSpaceMb(2, 255), 4, 'below 256 ranks: decision 0232 as before');
  t.equal(oldSpaceFloorMb(2, 1024), 0);
  t.equal(oldSpaceFloorMb(1, 256), 0);
  t.equal(oldSpaceFloorMb(2, 255), 32, 'below 256 ranks: decision 0215 as before');
  t.equal(oldSpaceFloorMb(1), 32);
});

t.test("a pool's isolates get the sizes of the session that starts it", async (t) => {
  const real = v8.setFlagsFromString;
  const started = async (ranks: number): Promise<string[]> => {
    const seen: string[] = [];
    v8.setFlagsFromString = (flags: string) => {
      seen.push(flags);
      real(flags);
    };
    const resources = new ThreadResources({ epochGc: false });
    try {
      resources.executorPool(2, ranks);
    } finally {
      v8.setFlagsFromString = real;
      await resources.close();
    }
    // The last value of each (the process's heap flags are set first, once).
    const last = new Map(seen.map((f) => f.split('=') as [string, string]));
    const compile = seen.filter((f) => /^--(no-)?concurrent-recompilation$/.test(f)).at(-1);
    return [...['--initial-old-space-size', '--max-semi-space-size'].map((name) => `${name}=${last.get(name)}`), compile ?? 'unset'];
  };
  const background = (ranks: number): string => (concurrentCompile(2, ranks, availableParallelism()) ? '--concurrent-recompilation' : '--no-concurrent-recompilation');
  t.same(await started(1024), ['--initial-old-space-size=0', '--max-semi-space-size=2', background(1024)]);
  t.same(await started(64), ['--initial-old-space-size=32', '--max-semi-space-size=4', '--concurrent-recompilation']);
});

t.test('a large session on more threads than cores optimises on its own threads; any other on V8\'s background threads', async (t) => {
  t.equal(concurrentCompile(2, 1024, 2), false, 'two executors, main and the coordinator on 2 cores');
  t.equal(concurrentCompile(1, 1024, 2), false, 'one executor: still three threads on 2 cores');
  t.equal(concurrentCompile(256, 256, 2), false);
  t.equal(concurrentCompile(2, 1024, 16), true, 'idle cores: the background compiles run beside the ranks');
  t.equal(concurrentCompile(2, 255, 2), true, 'below 256 ranks: V8\'s default');
  t.equal(concurrentCompile(64, 64, 2), true);
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

// Runs on: main thread (tap). Covers: a spawned rank's numpy() results move to
// main instead of being copied (lib/host/moved-arrays.ts, decision 0031), and
// everything else a rank returns is still copied.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';
import { SpawnError } from '../lib/errors.js';
import { detachedWorker, heldWhileOthersRun, keptLength, numpyWorker, tableWorker } from './fixtures/moved-results.js';

const rt = new TestRuntime({ modules: [new URL('./fixtures/moved-results.js', import.meta.url).href] });
t.teardown(() => rt.close());

const N = 1000;
const want = (rank: number): number[] => Array.from({ length: N }, (_, i) => rank * 100 + i);

t.test('a rank\'s numpy() result moves to main: its values arrive, and the rank\'s thread keeps an emptied array', async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 1 }, async (torch) => {
    const got = await torch.multiprocessing.spawn(numpyWorker, { args: [N], nprocs: 3 });
    t.same(got.map((g) => Array.from(g.values)), [0, 1, 2].map(want));
    t.ok(got.every((g) => g.again === g.values), 'the array returned twice arrives once');
    t.same(await torch.multiprocessing.spawn(keptLength, { nprocs: 3 }), [0, 0, 0], 'moved, not copied');
  });
});

t.test('a moved result is main\'s own: it can be changed, and it stays as it was after its session ends and the next one reuses the memory', async (t) => {
  const first = await rt.session({ topology: 'ring_1d_6', threads: 2 }, (torch) => torch.multiprocessing.spawn(numpyWorker, { args: [N], nprocs: 2 }));
  const [r0, r1] = first.value;
  r0.values[0] = -1;
  t.equal(r0.values[0], -1, 'writable');
  // A second session on the same threads, whose ranks write other values where the first ones' tensors were.
  const second = await rt.session({ topology: 'ring_1d_6', threads: 2 }, (torch) => torch.multiprocessing.spawn(numpyWorker, { args: [N], nprocs: 6 }));
  t.same(second.value.map((g) => g.values[1]), [0, 1, 2, 3, 4, 5].map((r) => want(r)[1]));
  t.same(Array.from(r0.values), [-1, ...want(0).slice(1)], 'rank 0\'s result: only main\'s own change');
  t.same(Array.from(r1.values), want(1), 'rank 1\'s result: unchanged');
});

t.test('an array a rank\'s own code made is copied: ranks of one thread may all return the same one', async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 1 }, async (torch) => {
    const got = await torch.multiprocessing.spawn(tableWorker, { nprocs: 3 });
    t.same(got.map((a) => Array.from(a)), [[1, 2, 3], [1, 2, 3], [1, 2, 3]]);
    const again = await torch.multiprocessing.spawn(tableWorker, { nprocs: 2 });
    t.same(again.map((a) => Array.from(a)), [[1, 2, 3], [1, 2, 3]], 'the thread\'s table is intact');
  });
});

t.test('a rank that returns a numpy() array it moved elsewhere itself fails with the clone error, and spawn does not wait for it', async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 1 }, async (torch) => {
    const e = await torch.multiprocessing.spawn(detachedWorker, { nprocs: 2 }).catch((x: unknown) => x);
    t.ok(e instanceof SpawnError, 'rejects with SpawnError');
    t.same([...(e as SpawnError).errors.values()].map((x) => x.name), ['DataCloneError', 'DataCloneError']);
  });
});

t.test('a rank\'s result moves once no rank runs on its thread: a rank still running there sees it whole (decision 0266)', async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 1 }, async (torch) => {
    const [first, seen] = await torch.multiprocessing.spawn(heldWhileOthersRun, { args: [N], nprocs: 2 });
    t.same(Array.from(first as Float32Array), want(0), 'rank 0\'s result arrives whole');
    t.equal(seen, N, 'rank 1 saw rank 0\'s returned array whole after rank 0 had returned');
    t.same(await torch.multiprocessing.spawn(keptLength, { nprocs: 1 }), [0], 'and it moved once both had settled');
  });
});

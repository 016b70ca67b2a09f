// Runs on: main thread (tap). Covers issue 23 item 6: a kernel that exhausts its
// thread's heap is reported with its code (ERR_EXECUTOR_OUT_OF_MEMORY), naming the
// kernel and its PE (structured fields), not as "executor 0 stopped". The threads are
// given a small heap (ThreadResources executorHeapMb) so that it runs out quickly.
// Under --threads 1, rank and pe; user code on the public API (test/fixtures/late-errors.ts).
import t from 'tap';
import { KernbenchError, SpawnError } from '../lib/public/index.js';
import { hogRank, quietRank } from './fixtures/late-errors.js';
import { TestRuntime } from './helpers/run.js';
import type { ThreadLayout } from '../lib/config/plan.js';

const LAYOUTS: ThreadLayout[] = [1, 'rank', 'pe'];
const MODULES = [new URL('./fixtures/late-errors.js', import.meta.url).href];
/**
 * A hang fails the test instead of the file. Most of the test is starting threads and
 * filling a 64 MB heap three times: a loaded machine needs the bound of a test that
 * starts threads (decision 0160), still under tap's bound for the group.
 */
const BOUND = { timeout: 60_000 };

t.test('a kernel that exhausts the heap is reported with its kernel and PE, under --threads 1, rank and pe', BOUND, async (t) => {
  const rt = new TestRuntime({ modules: MODULES, executorHeapMb: 64 });
  t.teardown(() => rt.close());
  for (const threads of LAYOUTS) {
    await rt.session({ topology: 'ideal', sets: ['system.sips.count=2'], threads }, async (torch) => {
      const e = await torch.multiprocessing.spawn(hogRank, { args: [], nprocs: 2 }).then(
        () => undefined,
        (x: unknown) => x,
      );
      t.ok(e instanceof SpawnError, `--threads ${threads}: ${String(e)}`);
      const root = (e as SpawnError).errors?.get(0);
      t.ok(root instanceof KernbenchError, `--threads ${threads}: rank 0 fails: ${String(root)}`);
      t.match(root, { code: 'ERR_EXECUTOR_OUT_OF_MEMORY', kernel: 'hog', pe: { sip: 0, cube: 0, pe: 0 } }, `--threads ${threads}: names the kernel and its PE`);
      t.same(await torch.multiprocessing.spawn(quietRank, { args: [], nprocs: 2 }), [0, 1], `--threads ${threads}: the session runs on`);
    });
  }
});

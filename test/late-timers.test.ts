// Runs on: main thread (tap). Covers issue 23 item 6: a timer that throws after its
// rank has returned fails that rank, in the spawn that started it (the rank ends once
// its timers have run); a timer still pending when its rank threw is cancelled: the
// next, unrelated spawn is never charged with it (decision 0096). Under --threads 1,
// rank and pe; user code on the public API (test/fixtures/late-errors.ts). The
// wall-clock pause between the spawns only gives a late timer the chance to fire
// there; nothing asserts on wall time.
// A kernel's timers: test/kernel-timers.test.ts.
import t from 'tap';
import { SpawnError } from '../lib/public/index.js';
import { lateTimerRank, quietRank } from './fixtures/late-errors.js';
import { TestRuntime } from './helpers/run.js';
import type { ThreadLayout } from '../lib/config/plan.js';

const LAYOUTS: ThreadLayout[] = [1, 'rank', 'pe'];
const MODULES = [new URL('./fixtures/late-errors.js', import.meta.url).href];
/** A hang fails the test instead of the file. */
const BOUND = { timeout: 25_000 };
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

t.test('a timer that throws after its rank returned fails that rank in its own spawn, never the next one, under --threads 1, rank and pe', BOUND, async (t) => {
  const rt = new TestRuntime({ modules: MODULES });
  t.teardown(() => rt.close());
  for (const threads of LAYOUTS) {
    await rt.session({ topology: 'ideal', sets: ['system.sips.count=2'], threads }, async (torch) => {
      for (let i = 0; i < 2; i++) {
        const e = await torch.multiprocessing.spawn(lateTimerRank, { args: ['return'], nprocs: 2 }).then(
          () => undefined,
          (x: unknown) => x,
        );
        t.ok(e instanceof SpawnError, `--threads ${threads}: the first spawn fails: ${String(e)}`);
        t.same([...((e as SpawnError).errors?.keys() ?? [])], [0], 'rank 0 only');
        t.match((e as SpawnError).errors?.get(0), { code: 'ERR_UNCAUGHT_EXCEPTION' }, 'with its timer\'s exception');
        await pause(50);
        t.same(await torch.multiprocessing.spawn(quietRank, { args: [], nprocs: 2 }), [0, 1], `--threads ${threads}: the next, unrelated spawn succeeds`);
      }
    });
  }
});

t.test('a timer still pending when its rank threw is cancelled: the rank\'s own error is the spawn\'s, and the next spawn is not charged', BOUND, async (t) => {
  const rt = new TestRuntime({ modules: MODULES });
  t.teardown(() => rt.close());
  for (const threads of LAYOUTS) {
    await rt.session({ topology: 'ideal', sets: ['system.sips.count=2'], threads }, async (torch) => {
      const e = await torch.multiprocessing.spawn(lateTimerRank, { args: ['throw'], nprocs: 2 }).then(
        () => undefined,
        (x: unknown) => x,
      );
      t.ok(e instanceof SpawnError, `--threads ${threads}: ${String(e)}`);
      t.same([...((e as SpawnError).errors?.keys() ?? [])], [0], 'rank 0 only');
      t.match((e as SpawnError).errors?.get(0), { name: 'TypeError' }, 'with its own error');
      await pause(50);
      t.same(await torch.multiprocessing.spawn(quietRank, { args: [], nprocs: 2 }), [0, 1], `--threads ${threads}: the next, unrelated spawn succeeds`);
    });
  }
});

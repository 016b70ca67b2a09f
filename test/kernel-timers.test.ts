// Runs on: main thread (tap). Covers decision 0096 for kernels: a kernel does not wait
// for its timers; one still pending when the kernel returned is cancelled (never charged
// to whatever runs next), and kernbench's own timers (the thread's wake loop, which
// serves every actor of the thread) are nobody's, so a kernel's end never stops its
// thread serving the next launches. Under --threads 1, rank and pe; user code on the
// public API (test/fixtures/late-errors.ts). The wall-clock pause after each launch only
// gives a timer that was not cancelled the chance to fire; nothing asserts on wall time.
import t from 'tap';
import { DPPolicy } from '../lib/public/index.js';
import { lateTimerKernel } from './fixtures/late-errors.js';
import { TestRuntime } from './helpers/run.js';
import type { ThreadLayout } from '../lib/config/plan.js';

const LAYOUTS: ThreadLayout[] = [1, 'rank', 'pe'];
const MODULES = [new URL('./fixtures/late-errors.js', import.meta.url).href];
/**
 * A hang fails the test instead of the file. Most of the test is starting threads (a
 * pool a layout, up to four threads), which took 7 to 13 s a layout at a load of 80.
 */
const BOUND = { timeout: 60_000 };
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

t.test('a timer still pending when its kernel returned is cancelled, and the kernel\'s end leaves its thread serving the next launches, under --threads 1, rank and pe', BOUND, async (t) => {
  const rt = new TestRuntime({ modules: MODULES });
  t.teardown(() => rt.close());
  const runs: { crits: number[]; digest: string }[] = [];
  for (const threads of LAYOUTS) {
    const run = await rt.session({ topology: 'ideal', sets: ['system.sips.count=2', 'cube.pe_layout.pe_per_corner=2'], threads }, async (torch) => {
      // Two PEs of one cube: under --threads 1 and rank, two kernels on one thread.
      const x = torch.zeros([8], { dp: new DPPolicy({ numPes: 2 }) });
      const out: number[] = [];
      for (let i = 0; i < 3; i++) {
        const h = torch.launch('lateTimerKernel', lateTimerKernel, x);
        await h.wait();
        out.push(h.critPs);
        await pause(50);
      }
      return out;
    });
    t.equal(run.value.length, 3, `--threads ${threads}: every launch ended, none was charged with a timer`);
    runs.push({ crits: run.value, digest: run.digest });
  }
  t.same(runs, LAYOUTS.map(() => runs[0]), 'the same times and digest under every layout');
});

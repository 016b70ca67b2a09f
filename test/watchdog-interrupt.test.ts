// Runs on: main thread (tap). Covers (issue 23 item 3; decision 0095): the
// library's interrupt (withTorch's AbortSignal) names the busy kernel with its rank's
// PE and the other rank, under --threads 1, rank and pe. User code on the public API
// (test/fixtures/stuck-kernels.ts). Asserts
// codes and the report's structured fields; no assertion is on wall time (a timeout
// is an input). Split from one file so that each stays within a file's time budget;
// the shared pieces are test/helpers/stopped.ts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { withTorch } from '../lib/bench/with-torch.js';
import { RunStoppedError } from '../lib/errors.js';
import { stuckRank } from './fixtures/stuck-kernels.js';
import type { ThreadLayout } from '../lib/config/plan.js';
import { KERNELS_URL, assertKernelRunning } from './helpers/stopped.js';

const LAYOUTS: ThreadLayout[] = [1, 'rank', 'pe'];

t.test('under --threads 1, rank and pe, an interrupted run names the busy kernel with its rank\'s PE, and the other rank', async (t) => {
  const dir = t.testdir({});
  for (const threads of LAYOUTS) {
    const marker = join(dir, `started-${threads}`);
    const stop = new AbortController();
    const run = withTorch({ topology: 'ideal', threads, signal: stop.signal, modules: [KERNELS_URL] }, (torch) => torch.multiprocessing.spawn(stuckRank, { args: ['spin', marker], nprocs: 2 })).then(
      () => undefined,
      (e: unknown) => e,
    );
    // Interrupt once the kernel has started (its thread is then busy for good).
    let settled = false;
    void run.then(() => (settled = true));
    while (!settled && !existsSync(marker)) await new Promise((r) => setTimeout(r, 50));
    stop.abort();
    const e = await run;
    t.ok(e instanceof RunStoppedError, `--threads ${threads}: ${String(e)}`);
    if (!(e instanceof RunStoppedError)) continue;
    t.equal(e.code, 'ERR_INTERRUPTED');
    assertKernelRunning(t, e.actors, 'spin');
    t.ok(e.actors.some((a) => a.rank === 0), 'rank 0 host is named');
    t.ok(e.actors.some((a) => a.who === 'main host' && a.state === 'waiting'), 'main waits for the ranks');
  }
});

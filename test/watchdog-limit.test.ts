// Runs on: main thread (tap). Covers (issue 23 item 3; decision 0095): the
// virtual-time limit (withTorch's maxVirtualTimeNs) stops a runaway kernel with the
// report, under --threads 1, rank and pe. User code on the public API
// (test/fixtures/stuck-kernels.ts). Asserts
// codes and the report's structured fields; no assertion is on wall time (a timeout
// is an input). Split from one file so that each stays within a file's time budget;
// the shared pieces are test/helpers/stopped.ts.
import t from 'tap';
import { withTorch } from '../lib/bench/with-torch.js';
import { RunStoppedError } from '../lib/errors.js';
import { stuckRank } from './fixtures/stuck-kernels.js';
import type { ThreadLayout } from '../lib/config/plan.js';
import { KERNELS_URL, assertKernelRunning } from './helpers/stopped.js';

const LAYOUTS: ThreadLayout[] = [1, 'rank', 'pe'];

t.test('under --threads 1, rank and pe, the virtual-time limit stops a runaway kernel with the same report', async (t) => {
  const limitNs = 5000;
  // One cube per SIP: 8 PEs, so --threads pe starts 8 threads rather than 32.
  for (const threads of LAYOUTS) {
    const e = await withTorch({ sets: ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1'], threads, maxVirtualTimeNs: limitNs, modules: [KERNELS_URL] }, (torch) => torch.multiprocessing.spawn(stuckRank, { args: ['runaway', ''], nprocs: 2 })).then(
      () => undefined,
      (x: unknown) => x,
    );
    t.ok(e instanceof RunStoppedError, `--threads ${threads}: ${String(e)}`);
    if (!(e instanceof RunStoppedError)) continue;
    t.equal(e.code, 'ERR_VIRTUAL_TIME_LIMIT');
    const k = assertKernelRunning(t, e.actors, 'runaway');
    t.ok((k?.atPs ?? 0) > limitNs * 1000, 'at its clock past the limit');
  }
});

// Runs on: main thread (tap), sessions on real threads. Covers: how the pieces of
// shared links are timed (SessionReport.linkPieces, decision 0100): a ring
// all-reduce, whose flows never meet, sends none to the link arbiter on one
// thread or on several; every piece it sends is timed alone, at once or after
// a hold, and most at once (decision 0170).
import t from 'tap';
import { TestRuntime } from './helpers/run.js';
import { worker } from '../benches/link_sharing.js';

const rt = new TestRuntime({ modules: [new URL('../benches/link_sharing.js', import.meta.url).href] });
t.teardown(() => rt.close());

const CLAIMED = ['timing.link_sharing=max_min'];

t.test('a ring whose flows never meet sends no piece to the link arbiter, on one thread or on several', async (t) => {
  for (const threads of [1, 'rank'] as const) {
    const run = await rt.session({ topology: 'ideal', algorithm: 'ring_allreduce', threads, sets: ['system.sips.count=8', ...CLAIMED] }, (torch) =>
      torch.multiprocessing.spawn(worker, { args: [16384, 2], nprocs: 8 }),
    );
    const n = run.report.linkPieces;
    t.equal(n.arbitrated, 0, `--threads ${threads}: none through the arbiter (${n.alone} alone at once, ${n.released} held then alone)`);
    t.equal(n.alone + n.released, run.report.messages, `--threads ${threads}: every piece sent was timed alone`);
    // Decision 0170: a piece waits only for the PEs whose routes reach its link in time, not
    // for the slowest rank of the ring, so most go at once (decision 0101 held most of them).
    t.ok(n.released * 3 < n.alone, `--threads ${threads}: at most a quarter held first (${n.released} of ${n.alone + n.released})`);
  }
});

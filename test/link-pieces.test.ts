// Runs on: main thread (tap), sessions on real threads. Covers: how the pieces of
// shared links are timed (SessionReport.linkPieces, decision 0100): a ring
// all-reduce, whose flows never meet, sends none to the link arbiter on one
// thread or on several; every piece it sends is timed alone, at once or after
// a hold, and most at once (decision 0170), on a torus too (decision 0261).
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

t.test('on a torus one thread steps its ranks in virtual-time order, so most pieces go alone at once (decision 0261)', async (t) => {
  // Ranks a few links apart on a torus are many positions apart along the ring. In the
  // order they yielded, the ranks of one thread drift up to p / 2 steps apart, and a
  // piece's proof then waits for a neighbour many steps behind: about a quarter of these
  // pieces were held first before the step queue (lib/sync/step-queue.ts), an eighth with
  // it (decision 0261 has the counts).
  const run = await rt.session({ topology: 'ideal_torus_2d_2x3', algorithm: 'ring_allreduce', threads: 1, sets: ['system.sips.count=144', 'system.sips.w=12', 'system.sips.h=12', ...CLAIMED] }, (torch) =>
    torch.multiprocessing.spawn(worker, { args: [9216, 1], nprocs: 144 }),
  );
  const n = run.report.linkPieces;
  const pieces = n.alone + n.released + n.arbitrated;
  t.equal(pieces, run.report.messages, 'every piece counted once');
  t.ok(n.released * 6 < pieces, `at most a sixth held first (${n.released} of ${pieces})`);
});

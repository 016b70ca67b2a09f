// Deadlock (DESIGN §5): when every live PE and rank waits and nothing is in
// flight, the run stops with an error naming each waiter and what it waits
// for — instead of hanging — and the threads stay usable afterwards.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';
import { deadlockWorker, sumWorker } from './fixtures/kernels.js';
import { DeadlockError } from '../lib/errors.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

for (const threads of [1, 'rank', 'pe'] as const) {
  t.test(`a ring in which every PE receives before sending is reported as a deadlock (--threads ${threads})`, async (t) => {
    let caught: unknown;
    await rt.session({ topology: 'ring_1d_6', threads }, async (torch) => {
      try {
        await torch.multiprocessing.spawn(deadlockWorker, { nprocs: 3 });
      } catch (e) {
        caught = e;
      }
    });
    t.ok(caught instanceof DeadlockError, 'spawn rejects with the DeadlockError');
    const e = caught as DeadlockError;
    t.equal(e.code, 'ERR_DEADLOCK');
    for (const sip of [0, 1, 2]) {
      const from = (sip + 2) % 3;
      t.ok(
        e.waiters.some((w) => w.startsWith(`PE (sip ${sip}, cube 0, pe 0) inbound west channel waits for IPCQ data from PE (sip ${from}, cube 0, pe 0)`)),
        `names PE ${sip}'s receive and whom it waits for`,
      );
      t.ok(e.waiters.some((w) => w.startsWith(`rank ${sip} host waits for a kernel on PE (sip ${sip}, cube 0, pe 0)`)), `names rank ${sip}'s host wait`);
    }
    t.ok(e.waiters.some((w) => w.startsWith('main host waits for 3 spawned rank(s)')), 'names the main host');
  });
}

t.test('after a deadlock the same session spawns again and completes', async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 'rank' }, async (torch) => {
    await t.rejects(torch.multiprocessing.spawn(deadlockWorker, { nprocs: 2 }), { code: 'ERR_DEADLOCK' });
    const ranks = await torch.multiprocessing.spawn(sumWorker, { args: [8], nprocs: 3 });
    t.same(ranks, [0, 1, 2].map(() => new Array(8).fill(6)), 'every rank sees 1 + 2 + 3');
  });
});

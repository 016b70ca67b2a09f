// A rank or kernel that fails outside its promise chain (issue 13, item 2): a
// throw in a timer callback, an unhandled rejection, process.exit(). Each used
// to kill or silence its executor thread, and the run hung. Now the fault
// fails its owner (found through its async context) as a root cause with its
// own code, the session aborts, and the threads stay usable.
import t from 'tap';
import { KernelError, SpawnError } from '../lib/public/index.js';
import { sumWorker } from './fixtures/kernels.js';
import { faultWorker, lateTimerWorker, type FaultKind } from './fixtures/faults.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [new URL('./fixtures/faults.js', import.meta.url).href] });
t.teardown(() => rt.close());

/**
 * A hang fails the test instead of the file. The first test also starts the group's
 * threads: the bound of a test that starts threads (decision 0160).
 */
const BOUND = { timeout: 60_000 };

const CASES: [FaultKind, string, string][] = [
  ['timer-throw', 'an exception thrown in a setTimeout callback', 'ERR_UNCAUGHT_EXCEPTION'],
  ['unhandled-rejection', 'an unhandled promise rejection', 'ERR_UNHANDLED_REJECTION'],
  ['exit-in-chain', 'process.exit() in its code', 'ERR_RANK_EXIT'],
  ['exit-in-timer', 'process.exit() in a setTimeout callback', 'ERR_RANK_EXIT'],
];

for (const threads of ['rank', 1] as const) {
  for (const [kind, what, code] of CASES) {
    t.test(`a rank that dies by ${what} fails the spawn with ${code} as its root cause (--threads ${threads})`, BOUND, async (t) => {
      await rt.session({ topology: 'ring_1d_6', threads }, async (torch) => {
        const e = await torch.multiprocessing.spawn(faultWorker, { args: [2, kind], nprocs: 4 }).catch((x: unknown) => x);
        t.ok(e instanceof SpawnError, 'rejects with SpawnError');
        t.same([...(e as SpawnError).errors.keys()], [2], 'only the failing rank');
        t.match((e as SpawnError).errors.get(2), { code });
        t.same(await torch.multiprocessing.spawn(sumWorker, { args: [2], nprocs: 3 }), [[6, 6], [6, 6], [6, 6]], 'the same threads spawn again');
      });
    });
  }

  t.test(`a kernel whose timer throws fails as a KernelError with its kernel and PE (--threads ${threads})`, BOUND, async (t) => {
    await rt.session({ topology: 'ring_1d_6', threads }, async (torch) => {
      const e = await torch.multiprocessing.spawn(faultWorker, { args: [1, 'kernel-timer-throw'], nprocs: 3 }).catch((x: unknown) => x);
      t.ok(e instanceof SpawnError, 'rejects with SpawnError');
      t.same([...(e as SpawnError).errors.keys()], [1], 'only the rank whose kernel faulted');
      const root = (e as SpawnError).errors.get(1);
      t.ok(root instanceof KernelError, 'a KernelError');
      t.match(root, { code: 'ERR_KERNEL', kernel: 'timer_throw', pe: { sip: 1, cube: 0, pe: 0 } });
      t.match(root?.cause, { code: 'ERR_UNCAUGHT_EXCEPTION' }, 'caused by the uncaught exception');
    });
  });
}

t.test('a throw in an I/O callback of a rank that shares its thread (--threads 1) ends the spawn with that fault instead of hanging', BOUND, async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 1 }, async (torch) => {
    // Nobody owns it there (ADR 0026): the session aborts with it, and the rank, awaiting a promise nothing settles, is ended too.
    const e = await torch.multiprocessing.spawn(faultWorker, { args: [2, 'io-throw'], nprocs: 4 }).catch((x: unknown) => x);
    const code = e instanceof SpawnError ? (e.errors.get(2) as { code?: string } | undefined)?.code : (e as { code?: string }).code;
    t.equal(code, 'ERR_UNCAUGHT_EXCEPTION', 'the fault is the spawn\'s error, or rank 2\'s');
    t.same(await torch.multiprocessing.spawn(sumWorker, { args: [2], nprocs: 3 }), [[6, 6], [6, 6], [6, 6]], 'the same threads spawn again');
  });
});

t.test('a timer that throws after its rank returned still fails the run: its rank, in its spawn (decision 0096)', BOUND, async (t) => {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const run = rt.session({ topology: 'ring_1d_6' }, async (torch) => {
    // The rank ends once its timer has run: the spawn fails with it as rank 0's error.
    const e = await torch.multiprocessing.spawn(lateTimerWorker, { args: [flag], nprocs: 2 }).catch((x: unknown) => x);
    t.equal(Atomics.load(flag, 0), 1, 'the timer ran before the spawn ended');
    throw (e as SpawnError).errors?.get(0) ?? e;
  });
  await t.rejects(run, { code: 'ERR_UNCAUGHT_EXCEPTION' });
});

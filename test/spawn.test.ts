// torch.multiprocessing.spawn (seed 000): fn(rank, ...args, torch) once per
// rank on the rank's executor, getRank bound; a throwing rank aborts its
// siblings and spawn rejects with SpawnError listing only root-cause ranks;
// the runtime stays usable.
import t from 'tap';
import { SpawnError } from '../lib/errors.js';
import { abortMidKernelWorker, failingWorker, sumWorker } from './fixtures/kernels.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

t.test('spawn runs fn once per rank and returns what each rank returned', async (t) => {
  const r = await rt.session({ topology: 'ring_1d_6' }, (torch) => torch.multiprocessing.spawn(sumWorker, { args: [4], nprocs: 4 }));
  t.same(r.value, [0, 1, 2, 3].map(() => [10, 10, 10, 10]));
});

t.test('a rank that throws: SpawnError names only that rank, with class and message kept', async (t) => {
  await rt.session({ topology: 'ring_1d_6' }, async (torch) => {
    const e = await torch.multiprocessing.spawn(failingWorker, { nprocs: 3 }).catch((x: unknown) => x);
    t.ok(e instanceof SpawnError, 'rejects with SpawnError');
    const s = e as SpawnError;
    t.equal(s.code, 'ERR_SPAWN');
    t.same([...s.errors.keys()], [1], 'only the root-cause rank');
    const root = s.errors.get(1);
    t.equal(root?.name, 'RangeError');
    t.equal(root?.message, 'rank 1 boom');
    t.ok(root instanceof RangeError, 'the class survives the thread boundary');
    t.match(root?.stack ?? '', /failingWorker/, 'the stack survives the thread boundary');
    // the same torch spawns again on fresh buffers
    const again = await torch.multiprocessing.spawn(sumWorker, { args: [2], nprocs: 2 });
    t.same(again, [[3, 3], [3, 3]]);
  });
});

t.test('a kernel unwound by the abort is not a root cause, even when it ends before its host wakes', async (t) => {
  // One executor per rank: rank 1 fails while rank 0's kernel holds its thread. Whether the
  // kernel's end or the abort reaches rank 0's host first depends on the interleaving (before
  // the fix, about 1 run in 4 listed rank 0 too), so the scenario runs several times.
  for (let i = 0; i < 4; i++) {
    await rt.session({ topology: 'ring_1d_6', threads: 'rank' }, async (torch) => {
      const e = await torch.multiprocessing.spawn(abortMidKernelWorker, { nprocs: 2 }).catch((x: unknown) => x);
      t.ok(e instanceof SpawnError, 'rejects with SpawnError');
      t.same([...(e as SpawnError).errors.entries()].map(([rank, err]) => [rank, err.name]), [[1, 'RangeError']], 'only rank 1, not the aborted kernel of rank 0');
    });
  }
});

t.test('ranks start at main\'s clock when spawned, and main continues from the latest rank when it joins', async (t) => {
  const { clockWorker } = await import('./fixtures/kernels.js');
  await rt.session({ topology: 'ring_1d_6' }, async (torch) => {
    for (const spawn of [1, 2]) {
      const at = torch.host.clockPs;
      const clocks = await torch.multiprocessing.spawn(clockWorker, { nprocs: 3 });
      t.same(clocks.map(([entry]) => entry), [at, at, at], `spawn ${spawn}: every rank starts at main's clock ${at} ps`);
      t.ok(clocks[2][1] > clocks[0][1], `spawn ${spawn}: uneven work ends at uneven times`);
      t.equal(torch.host.clockPs, Math.max(...clocks.map(([, exit]) => exit)), `spawn ${spawn}: main continues from the latest rank`);
    }
  });
});

t.test('join: false returns a context whose join() waits', async (t) => {
  const r = await rt.session({}, async (torch) => {
    const ctx = await torch.multiprocessing.spawn(sumWorker, { args: [3], nprocs: 2, join: false });
    t.notOk(Array.isArray(ctx), 'not the results yet');
    return ctx.join();
  });
  t.same(r.value, [[3, 3, 3], [3, 3, 3]]);
});

t.test('nprocs beyond the SIP count is refused with the count', async (t) => {
  await rt.session({}, async (torch) => {
    await t.rejects(torch.multiprocessing.spawn(sumWorker, { args: [2], nprocs: 3 }), { code: 'ERR_OUT_OF_RANGE', message: /nprocs must be in \[1, 2\].*got 3/ });
  });
});

t.test('join: false leaves main free to wait on its own work (memory grants included) before join()', async (t) => {
  const { addOne } = await import('./fixtures/kernels.js');
  // Six SIPs: the two ranks own SIPs 0 and 1, main the rest (decision 0090), so main's
  // own work goes on SIP 2.
  const r = await rt.session({ topology: 'ring_1d_6' }, async (torch) => {
    const ctx = await torch.multiprocessing.spawn(sumWorker, { args: [4], nprocs: 2, join: false });
    torch.ahbm.setDevice(2);
    const x = torch.zeros([1024]);
    await torch.launch('add_one', addOne, x); // its HBM accesses need quiescence while the ranks may be done
    return { ranks: await ctx.join(), x: (await x.numpy()).data[0] };
  });
  t.same(r.value, { ranks: [[3, 3, 3, 3], [3, 3, 3, 3]], x: 1 });
});

t.test('a deadlock behind join: false is still reported at join()', async (t) => {
  const { deadlockWorker } = await import('./fixtures/kernels.js');
  await rt.session({ topology: 'ring_1d_6' }, async (torch) => {
    const ctx = await torch.multiprocessing.spawn(deadlockWorker, { nprocs: 3, join: false });
    await t.rejects(ctx.join(), { code: 'ERR_DEADLOCK' });
  });
});

t.test('a KernelError thrown by a rank keeps its class and its cause across the thread boundary', async (t) => {
  const { kernelFailureWorker } = await import('./fixtures/kernels.js');
  const { KernelError } = await import('../lib/errors.js');
  await rt.session({}, async (torch) => {
    const e = (await torch.multiprocessing.spawn(kernelFailureWorker, { nprocs: 2 }).catch((x: unknown) => x)) as SpawnError;
    const root = e.errors.get(0);
    t.ok(root instanceof KernelError, 'instanceof KernelError');
    t.same((root as InstanceType<typeof KernelError>).pe, { sip: 0, cube: 0, pe: 0 });
    t.ok((root?.cause as Error) instanceof RangeError, 'the kernel\'s own RangeError is the cause');
  });
});

t.test('a tensor from before a failed spawn is refused, not silently aliased into new memory', async (t) => {
  const { addOne } = await import('./fixtures/kernels.js');
  await rt.session({}, async (torch) => {
    const old = torch.zeros([8]);
    await t.rejects(torch.multiprocessing.spawn(failingWorker, { nprocs: 2 }), { code: 'ERR_SPAWN' });
    const fresh = torch.zeros([8]);
    t.throws(() => torch.launch('add_one', addOne, old), { code: 'ERR_STALE_TENSOR' });
    await torch.launch('add_one', addOne, fresh);
    t.same(Array.from((await fresh.numpy()).data), new Array(8).fill(1));
  });
});

t.test('two spawns in one session: the second one\'s barriers wait for its own ranks', async (t) => {
  const r = await rt.session({ topology: 'ring_1d_6' }, async (torch) => {
    const a = await torch.multiprocessing.spawn(sumWorker, { args: [2], nprocs: 3 });
    const b = await torch.multiprocessing.spawn(sumWorker, { args: [2], nprocs: 4 });
    const c = await torch.multiprocessing.spawn(sumWorker, { args: [2], nprocs: 2 });
    const { barrierClockWorker } = await import('./fixtures/kernels.js');
    const clocks = await torch.multiprocessing.spawn(barrierClockWorker, { nprocs: 4 });
    return { a, b, c, clocks };
  });
  t.same({ ...r.value, clocks: undefined }, { a: [[6, 6], [6, 6], [6, 6]], b: [[10, 10], [10, 10], [10, 10], [10, 10]], c: [[3, 3], [3, 3]], clocks: undefined });
  t.equal(new Set(r.value.clocks).size, 1, `every rank leaves the barrier at the latest arrival: ${r.value.clocks.join(', ')}`);
});

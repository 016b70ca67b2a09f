// Errors larger than their slot (issue 13, item 1): a deadlock report of 8 or
// more ranks and a kernel error over 8 KiB used to be stored as truncated
// JSON, which no thread could revive, so the run hung or lost the kernel, the
// PE and the time. A slot now always holds a valid, revivable error.
import t from 'tap';
import { DeadlockError, KernbenchError, SpawnError, fitSerializedError, reviveError, serializeError, utf8Bytes } from '../lib/errors.js';
import { ERROR_SLOT_BYTES, KERNEL_NAME_BYTES } from '../lib/shm/layout.js';
import { SharedState, readKernelName, writeKernelName } from '../lib/shm/shared-state.js';
import { deadlockWorker } from './fixtures/kernels.js';
import { hugeErrorKernel, hugeErrorWorker } from './fixtures/faults.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [new URL('./fixtures/faults.js', import.meta.url).href] });
t.teardown(() => rt.close());

function bigKernelError(): KernbenchError {
  const cause = new RangeError(`huge: ${'é'.repeat(30_000)}`);
  Object.assign(cause, { details: Array.from({ length: 5_000 }, (_, i) => `detail ${i}`) });
  return new KernbenchError('ERR_KERNEL', `kernel 'k' threw: ${cause.message}`, { kernel: 'k', pe: { sip: 1, cube: 0, pe: 2 }, atPs: 12_345, cause });
}

t.test('an error too large for its slot is shortened to a valid error that keeps name, code, kernel, PE and time', async (t) => {
  const s = serializeError(bigKernelError());
  t.ok(utf8Bytes(JSON.stringify(s)) > ERROR_SLOT_BYTES, 'the fixture is larger than a slot');
  const fitted = fitSerializedError(s, ERROR_SLOT_BYTES - 64);
  t.ok(utf8Bytes(JSON.stringify(fitted)) <= ERROR_SLOT_BYTES - 64, 'fits');
  const e = reviveError(JSON.parse(JSON.stringify(fitted)));
  t.match(e, { name: 'KernbenchError', code: 'ERR_KERNEL', kernel: 'k', pe: { sip: 1, cube: 0, pe: 2 }, atPs: 12_345, truncated: true });
  t.equal((e.cause as Error | undefined)?.name, 'RangeError', 'the cause keeps its class name');
  t.same(fitSerializedError(s, ERROR_SLOT_BYTES - 64), fitted, 'the same error fits the same way every time');
});

t.test('an error that fits is left untouched', async (t) => {
  const s = serializeError(new DeadlockError(['a waits for b', 'b waits for a']));
  t.same(fitSerializedError(s, ERROR_SLOT_BYTES), s);
});

for (const threads of [1, 'rank'] as const) {
  t.test(`a deadlock of 8 ranks is reported with every rank named (--threads ${threads})`, async (t) => {
    await rt.session({ topology: 'ring_1d_6', sets: ['system.sips.count=8'], threads }, async (torch) => {
      const e = await torch.multiprocessing.spawn(deadlockWorker, { nprocs: 8 }).catch((x: unknown) => x);
      t.ok(e instanceof DeadlockError, 'spawn rejects with the DeadlockError');
      const waiters = (e as DeadlockError).waiters;
      for (let r = 0; r < 8; r++) t.ok(waiters.some((w) => w.startsWith(`rank ${r} host waits`)), `names rank ${r}'s host`);
    });
  });
}

t.test('a kernel error over 8 KiB reaches the host as a KernelError with its kernel, PE and time', async (t) => {
  await rt.session({}, async (torch) => {
    const e = await Promise.resolve(torch.launch('huge_error', hugeErrorKernel, torch.zeros([4]))).catch((x: unknown) => x);
    t.match(e, { code: 'ERR_KERNEL', kernel: 'huge_error', pe: { sip: 0, cube: 0, pe: 0 } });
    t.ok(((e as KernbenchError).atPs ?? 0) > 0, 'the virtual time at which it threw');
    t.equal(((e as Error).cause as Error | undefined)?.name, 'RangeError', "the kernel's own error class");
  });
});

t.test("a rank that rethrows an oversized kernel error fails the spawn with that kernel's error", async (t) => {
  await rt.session({}, async (torch) => {
    const e = await torch.multiprocessing.spawn(hugeErrorWorker, { nprocs: 2 }).catch((x: unknown) => x);
    t.ok(e instanceof SpawnError, 'rejects with SpawnError');
    t.same([...(e as SpawnError).errors.keys()], [0]);
    t.match((e as SpawnError).errors.get(0), { code: 'ERR_KERNEL', kernel: 'huge_error' });
    t.equal(((e as SpawnError).errors.get(0)?.cause as Error | undefined)?.name, 'RangeError', "the kernel's own error class");
  });
});

t.test('a deadlock report larger than the report slot is read back as a DeadlockError with its first waiters', async (t) => {
  const sh = SharedState.create({ executors: 1, pes: 2, hosts: 2, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 1024 });
  const waiters = Array.from({ length: 20_000 }, (_, i) => `PE ${i} waits for PE ${i + 1}`);
  sh.writeErrorSlot(-1, { error: serializeError(new DeadlockError(waiters)) });
  const slot = sh.readErrorSlot(-1);
  const e = slot && reviveError(slot.error);
  t.ok(e instanceof DeadlockError, 'a DeadlockError');
  t.match(e, { code: 'ERR_DEADLOCK', truncated: true });
  t.same((e as DeadlockError).waiters.slice(0, 3), waiters.slice(0, 3), 'the first waiters, in order');
});

t.test('reading a slot that does not hold an error gives an ERR_INTERNAL error instead of throwing', async (t) => {
  const sh = SharedState.create({ executors: 1, pes: 2, hosts: 2, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 1024 });
  const off = sh.layout.errorOffset(1);
  const junk = new TextEncoder().encode('{"truncated":"{\\"error\\":{\\"na');
  new DataView(sh.buffers.cmd).setUint32(off, junk.length, true);
  sh.cmd.set(junk, off + 4);
  t.match(sh.readErrorSlot(1)?.error, { code: 'ERR_INTERNAL' });
});

t.test("a PE's published kernel name reads back as written, in turn on two PEs and cut to its slot as an encoding cut it", async (t) => {
  const sh = SharedState.create({ executors: 1, pes: 2, hosts: 2, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 1024 });
  const long = 'é'.repeat(KERNEL_NAME_BYTES);
  const cut = new TextDecoder().decode(new TextEncoder().encode(long).subarray(0, KERNEL_NAME_BYTES - 1));
  const seen: string[] = [];
  // The same name twice running, then another: each PE keeps its own (writeKernelName keeps the last one's bytes).
  for (const [pe, name] of [[0, 'all_reduce'], [1, 'all_reduce'], [0, 'barrier'], [1, long], [0, ''], [1, 'all_reduce']] as const) {
    writeKernelName(sh, pe, name);
    seen.push(`${pe}:${readKernelName(sh, 0)}|${readKernelName(sh, 1)}`);
  }
  t.same(seen, ['0:all_reduce|', '1:all_reduce|all_reduce', '0:barrier|all_reduce', `1:barrier|${cut}`, `0:|${cut}`, '1:|all_reduce']);
});


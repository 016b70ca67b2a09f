// The kernel language (issue 3, item 7): every elementwise op against plain
// arithmetic, bounds-checked loads and stores, TCM scratch that refuses to
// overflow and is released when the kernel returns.
import t from 'tap';
import { SpawnError } from '../lib/errors.js';
import { DPPolicy } from '../lib/host/dp-policy.js';
import { allOps, dirtyTiles, greedyScratch, storeZeros, neighbourSumWorker, outOfBounds, recvShortWorker, recvWrongOutWorker, refuse, scratchRoundTrip } from './fixtures/kernels.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

const X = [-2, -0.5, 0, 0.25, 1, 1.5, 3, 8];
const Y = [1, 2, -4, 0.5, 3, -1.5, 0.75, 2];

function softmax(v: number[]): number[] {
  const m = Math.max(...v);
  const e = v.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

t.test('elementwise ops, softmax and cdiv match plain arithmetic (f32)', async (t) => {
  const r = await rt.session({}, async (torch) => {
    const x = torch.zeros([8]);
    const y = torch.zeros([8]);
    const out = torch.zeros([80]);
    await x.copy_(torch.fromArray(X));
    await y.copy_(torch.fromArray(Y));
    await torch.launch('all_ops', allOps, x, y, out);
    return Array.from((await out.numpy()).data);
  });
  const want = [
    X.map((a, i) => a + Y[i]),
    X.map((a, i) => a - Y[i]),
    X.map((a, i) => a * Y[i]),
    X.map((a, i) => a / Y[i]),
    X.map((a, i) => Math.max(a, Y[i])),
    X.map((a, i) => Math.min(a, Y[i])),
    X.map((a, i) => a * Y[i] + 1),
    X.map((a) => Math.min(Math.max(a, -1), 2)),
    softmax(X),
    X.map((a) => a * 4),
  ].map((row) => row.map((v) => Math.fround(v)));
  const got = Array.from({ length: 10 }, (_, i) => r.value.slice(i * 8, i * 8 + 8));
  t.same(got.filter((_, i) => i !== 8), want.filter((_, i) => i !== 8), 'exact for everything but softmax');
  // softmax keeps its exponentials in f32 before normalising: within a few f32 ulps
  t.ok(got[8].every((v, i) => Math.abs(v - want[8][i]) <= 4 * 2 ** -24 * Math.max(v, 2 ** -20)), `softmax ${got[8].join(',')}`);
  t.ok(Math.abs(got[8].reduce((a, b) => a + b, 0) - 1) < 1e-6, 'softmax sums to 1');
});

t.test('a load past the end of the shard is an error naming PE, kernel, range and time', async (t) => {
  await rt.session({}, async (torch) => {
    const x = torch.zeros([16]);
    const e = (await torch.launch('oob', outOfBounds, x).wait().catch((err: unknown) => err)) as { code: string; cause: { code: string; message: string } };
    t.equal(e.code, 'ERR_KERNEL');
    t.equal(e.cause.code, 'ERR_OUT_OF_BOUNDS');
    t.match(e.cause.message, /^oob on PE \(sip 0, cube 0, pe 0\) at [0-9.]+ ns: load of elements \[15, 17\) is outside the shard/);
  });
});

t.test('scratch beyond the TCM is refused with ERR_OUT_OF_MEMORY', async (t) => {
  await rt.session({}, async (torch) => {
    const x = torch.zeros([4]);
    const e = (await torch.launch('greedy', greedyScratch, x, torch.spec.timing.memory.tcm.bytes).wait().catch((err: unknown) => err)) as { cause: { code: string; message: string } };
    t.equal(e.cause.code, 'ERR_OUT_OF_MEMORY');
    t.match(e.cause.message, /scratch 'too_big'.*TCM of \(sip 0, cube 0, pe 0\)/);
  });
});

t.test('a kernel\'s scratch is released when it returns, so it can be used again and again', async (t) => {
  await rt.session({}, async (torch) => {
    const n = Math.floor(torch.spec.timing.memory.tcm.bytes / 4 / 2); // half the TCM each time
    const x = torch.zeros([n]);
    await x.copy_(torch.fromArray(new Float32Array(n).fill(1)));
    for (let i = 0; i < 3; i++) await torch.launch('scratch', scratchRoundTrip, x, n);
    t.equal((await x.numpy()).data[n - 1], 8, '1 doubled three times');
  });
});

t.test('tile memory reused after earlier kernels comes back zeroed, and adds over it are exact', async (t) => {
  await rt.session({}, async (torch) => {
    const n = 3000;
    const x = torch.zeros([2 * n]);
    const ramp = Float32Array.from({ length: 2 * n }, (_, i) => i * 0.5 - 7);
    for (let i = 0; i < 3; i++) await torch.launch('dirty', dirtyTiles, x, n, 99 + i);
    await x.copy_(torch.fromArray(ramp));
    await torch.launch('store_zeros', storeZeros, x, n);
    const got = (await x.numpy()).data;
    t.ok(got.subarray(0, n).every((v) => v === 0), 'tl.zeros after kernels that dirtied their tiles');
    t.same(Array.from(got.subarray(n)), Array.from(ramp.subarray(n)), 'x + zeros is x');
  });
});

t.test('recv and add with an out tile give the same values and virtual times as without', async (t) => {
  for (const dtype of ['f32', 'f16'] as const) {
    const run = async (useOut: boolean) => {
      const r = await rt.session({ topology: 'ring_1d_6', threads: 1 }, (torch) => torch.multiprocessing.spawn(neighbourSumWorker, { args: [useOut, dtype], nprocs: 3 }));
      return r.value as { values: number[]; startPs: number; endPs: number }[];
    };
    const plain = await run(false);
    const into = await run(true);
    // rank r holds r + 1 + i/8 and receives from rank r - 1 (mod 3)
    const want = [0, 1, 2].map((r) => Array.from({ length: 24 }, (_, i) => (r + 1 + i / 8) + (((r + 2) % 3) + 1 + i / 8)));
    t.same(plain.map((v) => v.values), want, `${dtype}: the sums (exact in ${dtype})`);
    t.same(into, plain, `${dtype}: values and PE start/end times identical with out`);
  }
});

t.test('an out tile of the wrong size is refused with the sizes', async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 1 }, async (torch) => {
    const e = await torch.multiprocessing.spawn(recvWrongOutWorker, { nprocs: 2 }).catch((x: unknown) => x);
    t.ok(e instanceof SpawnError);
    const cause = [...(e as SpawnError).errors.values()].map((err) => (err as { cause?: { code?: string; message?: string } }).cause);
    t.ok(cause.length > 0 && cause.every((c) => c?.code === 'ERR_TILE_MISMATCH' && /recv: out must be a f32 tile of 8 elements, got a f32 tile of 9 elements/.test(c.message ?? '')), JSON.stringify(cause));
  });
});

t.test('tl refuses a bad axis, direction, tl.parallel argument or a tensor with no shard on the PE, each with its own code', async (t) => {
  await rt.session({}, async (torch) => {
    // x spans PEs 0 and 1 of cube 0, so the kernel runs on both; `elsewhere` lives on PE 0 only.
    const x = torch.zeros([8], { dp: new DPPolicy({ numPes: 2 }) });
    const elsewhere = torch.zeros([4]);
    const codes: Record<string, string | undefined> = {};
    for (const what of ['programId', 'direction', 'parallel', 'shard']) {
      const e = (await Promise.resolve(torch.launch('refuse', refuse, x, elsewhere, what)).catch((err: unknown) => err)) as { code?: string; cause?: { code?: string } };
      t.equal(e?.code, 'ERR_KERNEL', `${what}: a kernel error`);
      codes[what] = e?.cause?.code;
    }
    t.same(codes, { programId: 'ERR_INVALID_ARG_VALUE', direction: 'ERR_UNKNOWN_DIRECTION', parallel: 'ERR_INVALID_ARG_TYPE', shard: 'ERR_TENSOR_PLACEMENT' });
  });
});

t.test("a receive that the sender's pieces overshoot is refused with ERR_IPCQ_PIECES", async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 1 }, async (torch) => {
    const e = await torch.multiprocessing.spawn(recvShortWorker, { nprocs: 2 }).catch((x: unknown) => x);
    t.ok(e instanceof SpawnError);
    const causes = [...(e as SpawnError).errors.values()].map((err) => (err as { cause?: { code?: string } }).cause?.code);
    t.ok(causes.length > 0 && causes.every((c) => c === 'ERR_IPCQ_PIECES'), JSON.stringify(causes));
  });
});

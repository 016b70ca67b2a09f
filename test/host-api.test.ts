// Host API contracts (seed 000 D0/D0.5, ADR-0026): worker-wait, the host-read
// barrier and its closed registry, kernel errors reaching the host, DPPolicy.
import { inspect } from 'node:util';
import t from 'tap';
import { DPPolicy } from '../lib/host/dp-policy.js';
import { HOST_READ_BARRIERS, Tensor } from '../lib/host/tensor.js';
import { KernelError } from '../lib/errors.js';
import { PE } from '../lib/shm/layout.js';
import { addOne, failing } from './fixtures/kernels.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

t.test('awaiting a launch is worker-wait: it completes, is idempotent, and a completed handle resolves at once', async (t) => {
  await rt.session({}, async (torch) => {
    const x = torch.zeros([8], { name: 'x' });
    const h = torch.launch('add_one', addOne, x);
    t.notOk(h.done, 'not complete before it is awaited');
    await h;
    t.ok(h.done);
    await h.wait();
    await h; // idempotent
    t.ok(h.critPs > 0, 'the kernel took virtual time');
    t.same(Array.from((await x.numpy()).data), new Array(8).fill(1));
  });
});

t.test('numpy() drains pending launches first (the host-read barrier)', async (t) => {
  // One SIP of one cube: its 4 PEs run the launches on 4 threads (decision 0160: more PEs,
  // idle or each holding a slice, would add threads to start and nothing to the claim).
  await rt.session({ threads: 'pe', sets: ['system.sips.count=1', 'sip.cube_mesh.w=1', 'sip.cube_mesh.h=1'] }, async (torch) => {
    const x = torch.zeros([1, 16], { dp: new DPPolicy({ pe: 'column_wise', numPes: 4 }) });
    torch.launch('add_one', addOne, x);
    torch.launch('add_one', addOne, x);
    t.same(Array.from((await x.numpy()).data), new Array(16).fill(2), 'both launches are visible');
    t.equal(torch.host.pending.size, 0, 'nothing left pending');
  });
});

t.test('synchronous reads refuse while launches are pending, and work after synchronize()', async (t) => {
  await rt.session({}, async (torch) => {
    const x = torch.zeros([4]);
    torch.launch('add_one', addOne, x);
    t.throws(() => x.at(0), { code: 'ERR_HOST_READ_PENDING' });
    t.throws(() => x.toString(), { code: 'ERR_HOST_READ_PENDING' });
    t.throws(() => inspect(x), { code: 'ERR_HOST_READ_PENDING' });
    await torch.synchronize();
    t.equal(x.at(3), 1);
    t.match(x.toString(), /tensor\(\[1, 1, 1, 1\]/);
  });
});

t.test('the target side of copy_ is not a barrier; the source side is', async (t) => {
  await rt.session({}, async (torch) => {
    const x = torch.zeros([4]);
    const h = torch.launch('add_one', addOne, x);
    await x.copy_(torch.fromArray([5, 5, 5, 5]));
    t.notOk(h.done, 'copying into x did not wait for the launch on x');
    await h;
    const y = torch.zeros([4]);
    const h2 = torch.launch('add_one', addOne, y);
    const z = torch.zeros([4]);
    await z.copy_(y);
    t.ok(h2.done, 'copying from y waited for the launch on y');
    t.same(Array.from((await z.numpy()).data), [1, 1, 1, 1]);
  });
});

t.test('the host-read barrier registry is closed: exactly the Tensor members that read device memory are listed', async (t) => {
  await rt.session({}, async (torch) => {
    const proto = Tensor.prototype as unknown as Record<PropertyKey, unknown>;
    const members: PropertyKey[] = [...Object.getOwnPropertyNames(proto), ...Object.getOwnPropertySymbols(proto)].filter((k) => k !== 'constructor' && k !== 'readNow');
    const reading: PropertyKey[] = [];
    for (const k of members) {
      const x = torch.zeros([1]);
      const other = torch.zeros([1]);
      let reads = 0;
      for (const tensor of [x, other]) {
        const real = (tensor as unknown as { readNow: () => unknown }).readNow.bind(tensor);
        (tensor as unknown as { readNow: () => unknown }).readNow = () => {
          reads++;
          return real();
        };
      }
      const d = Object.getOwnPropertyDescriptor(proto, k);
      if (d?.get) await Promise.resolve(d.get.call(x));
      else if (typeof d?.value === 'function') await Promise.resolve((d.value as (...a: unknown[]) => unknown).call(x, k === 'at' ? 0 : other));
      if (reads > 0) reading.push(k);
    }
    const listed = [...Object.keys(HOST_READ_BARRIERS), ...Object.getOwnPropertySymbols(HOST_READ_BARRIERS)];
    t.same(new Set(reading), new Set(listed));
  });
});

t.test('a kernel error reaches the awaiting host with PE, kernel name and virtual time', async (t) => {
  await rt.session({}, async (torch) => {
    const x = torch.zeros([4]);
    const e = await torch.launch('boom', failing, x).wait().catch((err: unknown) => err);
    t.ok(e instanceof KernelError);
    const k = e as KernelError;
    t.equal(k.code, 'ERR_KERNEL');
    t.equal(k.kernel, 'boom');
    t.same(k.pe, { sip: 0, cube: 0, pe: 0 });
    t.ok((k.atPs ?? 0) > 0, 'the load before the throw took time');
    t.match(k.message, /boom from a kernel/);
    t.ok((k.cause as Error).name === 'RangeError', 'the kernel error keeps its class as the cause');
    await t.rejects(torch.launch('boom', failing, x).wait(), { code: 'ERR_KERNEL' }, 'the PE keeps working');
  });
});

t.test('no kernel is left orphaned: when a spawn returns, every launched kernel has finished', async (t) => {
  const { leakyWorker } = await import('./fixtures/kernels.js');
  await rt.session({}, async (torch, session) => {
    await torch.multiprocessing.spawn(leakyWorker, { nprocs: 2 });
    const L = session.shared.layout;
    for (let pe = 0; pe < L.dims.pes; pe++) {
      t.equal(Atomics.load(session.shared.ctl, L.pe(pe, PE.DONE_SEQ)), Atomics.load(session.shared.ctl, L.pe(pe, PE.LAUNCHED)), `PE ${pe}`);
    }
  });
});

t.test('DPPolicy is intra-device: sip and numSips are refused with ERR_DPPOLICY_SIP, pointing at setDevice', async (t) => {
  t.throws(() => new DPPolicy({ sip: 'column_wise' } as never), { code: 'ERR_DPPOLICY_SIP', message: /setDevice/ });
  t.throws(() => new DPPolicy({ numSips: 2 } as never), { code: 'ERR_DPPOLICY_SIP', message: /setDevice/ });
});

t.test('DPPolicy refuses an unknown key, an unknown split mode and a count below 1, each with its own code', async (t) => {
  t.throws(() => new DPPolicy({ cubes: 2 } as never), { code: 'ERR_UNKNOWN_OPTION' });
  t.throws(() => new DPPolicy({ cube: 'diagonal' } as never), { code: 'ERR_INVALID_ARG_VALUE' });
  t.throws(() => new DPPolicy({ numPes: 0 }), { code: 'ERR_OUT_OF_RANGE' });
});

t.test('host API misuse is refused with one code per condition', async (t) => {
  await rt.session({}, async (torch) => {
    const pesPerCube = torch.spec.cube.pe_layout.corners.length * torch.spec.cube.pe_layout.pe_per_corner;
    t.throws(() => torch.ahbm.setDevice(torch.spec.system.sips.count), { code: 'ERR_OUT_OF_RANGE' }, 'a device past the last SIP');
    t.throws(() => torch.zeros([4], { dtype: 'f64' as never }), { code: 'ERR_INVALID_DTYPE' }, 'an unknown dtype');
    t.throws(() => torch.zeros([2, 2, 2]), { code: 'ERR_INVALID_SHAPE' }, 'a 3-D shape');
    t.throws(() => torch.zeros([4], { dp: new DPPolicy({ pe: 'replicate', numPes: pesPerCube + 1 }) }), { code: 'ERR_DPPOLICY_TOO_WIDE' }, 'more PEs than a cube has');
    t.throws(() => torch.fromArray([1, 2, 3], { shape: [2, 2] }), { code: 'ERR_VALUE_COUNT_MISMATCH' }, 'three values for four elements');
    const x = torch.fromArray([1, 2, 3, 4]);
    t.throws(() => x.at(4), { code: 'ERR_INDEX_OUT_OF_RANGE' }, 'an index past the end');
    await t.rejects(x.item(), { code: 'ERR_SHAPE_MISMATCH' }, 'item() of four elements');
    await t.rejects(torch.zeros([4]).copy_(torch.fromArray([1, 2, 3])), { code: 'ERR_SHAPE_MISMATCH' }, 'copy_ across sizes');
    t.throws(() => torch.launch('add_one', addOne, x as never), { code: 'ERR_NEEDS_DEVICE_TENSOR' }, 'a launch with only a host tensor');
  });
});

t.test('DPPolicy places blocks column-wise, row-wise, replicated and tiled with structural coordinates', async (t) => {
  await rt.session({}, async (torch) => {
    torch.ahbm.setDevice(1);
    const col = torch.zeros([2, 8], { dp: new DPPolicy({ cube: 'column_wise', pe: 'column_wise', numCubes: 2, numPes: 2 }) });
    t.same(col.desc?.shards.map((s) => [s.sip, s.cube, s.pe, s.cols[0], s.cols[1]]), [[1, 0, 0, 0, 2], [1, 0, 1, 2, 2], [1, 1, 0, 4, 2], [1, 1, 1, 6, 2]]);
    const row = torch.zeros([4, 2], { dp: new DPPolicy({ cube: 'row_wise', numCubes: 4 }) });
    t.same(row.desc?.shards.map((s) => [s.cube, s.rows[0], s.rows[1]]), [[0, 0, 1], [1, 1, 1], [2, 2, 1], [3, 3, 1]]);
    const rep = torch.zeros([2, 2], { dp: new DPPolicy({ cube: 'replicate', numCubes: 3 }) });
    t.same(rep.desc?.shards.map((s) => [s.cube, s.rows, s.cols]), [0, 1, 2].map((c) => [c, [0, 2], [0, 2]]));
    const tiled = torch.zeros([4, 4], { dp: new DPPolicy({ pe: 'tiled', numPes: 4 }) });
    t.same(tiled.desc?.shards.map((s) => [s.pe, s.rows[0], s.cols[0]]), [[0, 0, 0], [1, 0, 2], [2, 2, 0], [3, 2, 2]]);
    const values = Array.from({ length: 16 }, (_, i) => i);
    await col.copy_(torch.fromArray(values, { shape: [2, 8] }));
    t.same(Array.from((await col.numpy()).data), values, 'numpy gathers every shard back into place');
  });
});

t.test('shapes that do not divide are refused with the shape, the policy and the count', async (t) => {
  await rt.session({}, async (torch) => {
    t.throws(() => torch.zeros([2, 6], { dp: new DPPolicy({ cube: 'column_wise', numCubes: 4 }) }), { code: 'ERR_UNEVEN_SPLIT', message: /DPPolicy\(cube=column_wise.*\[2, 6\].*4 equal parts, got 6 columns/ });
  });
});

t.test('a TCM allocation larger than the TCM is refused', async (t) => {
  await rt.session({}, async (torch) => {
    const tcm = torch.spec.timing.memory.tcm.bytes;
    t.throws(() => torch.zeros([tcm], { space: 'tcm' }), { code: 'ERR_OUT_OF_MEMORY', message: /TCM of \(sip 0, cube 0, pe 0\) holds/ });
  });
});

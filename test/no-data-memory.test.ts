// Timing-only mode backs no tensor data (issue 14, item 3): allocations are
// placed and checked against device capacity, but the session arena holds no
// bytes for them, so a run may allocate more than the arena (1 GiB) could hold;
// its IPCQ slots are headers only.
import t from 'tap';
import { INLINE_PAYLOAD_BYTES, SLOT } from '../lib/shm/layout.js';
import { DEFAULT_ARENA_BYTES } from '../lib/config/plan.js';
import { TestRuntime } from './helpers/run.js';
import { SLAB_PROBE, slabBytesOfAllReduce } from './fixtures/slab-probe.js';
import { Tile } from '../lib/tile/tile.js';
import { blankF32, isBlank } from '../lib/tile/blank.js';

const rt = new TestRuntime({ modules: [SLAB_PROBE] });
t.teardown(() => rt.close());

/** f32 elements of 768 MiB: two such tensors exceed the arena, one fits a 16 GiB HBM. */
const BIG = (768 * 1024 * 1024) / 4;

t.test('with --no-data two 768 MiB tensors fit although the arena holds 1 GiB', async (t) => {
  t.ok(2 * BIG * 4 > DEFAULT_ARENA_BYTES);
  const r = await rt.session({ noData: true }, async (torch) => {
    const a = torch.zeros([BIG]);
    const b = torch.zeros([BIG]);
    await b.copy_(a);
    return [a.desc?.shards[0].deviceOffset, b.desc?.shards[0].deviceOffset, b.desc?.shards[0].arenaOffset];
  });
  t.same(r.value, [0, BIG * 4, -1], 'device offsets are kept; no arena bytes are handed out');
});

t.test('with --no-data device capacity is still checked: more than the device holds is ERR_OUT_OF_MEMORY', async (t) => {
  await t.rejects(
    rt.session({ noData: true }, async (torch) => {
      for (let i = 0; i < 100; i++) torch.zeros([BIG]); // 22 x 768 MiB = 16.5 GiB: more than the 16 GiB HBM of cube 0, where they go
    }),
    { code: 'ERR_OUT_OF_MEMORY' },
  );
});

t.test('with --no-data a ring all-reduce on the ideal topology has the crit_ns it has with data', async (t) => {
  const over = { topology: 'ideal', dtype: 'f32' as const, sets: ['ccl.n_elem=16384'] };
  const [full] = await rt.bench('ccl_allreduce', over);
  const [timing] = await rt.bench('ccl_allreduce', { ...over, noData: true });
  t.ok(full.ok && timing.ok);
  t.equal(timing.critNs, full.critNs);
});

t.test('with --no-data the shared buffers hold no payload: no arena, IPCQ slots of one header line each', async (t) => {
  const sizes = async (noData: boolean) =>
    (
      await rt.session({ topology: 'ideal', noData }, async (torch) => {
        const { buffers, layout } = torch.host.env.shared;
        return { arena: buffers.arena.byteLength, ipcq: buffers.ipcq.map((b) => b.byteLength), rings: layout.ringsPerSet, slots: layout.dims.nSlots, slotSize: layout.dims.slotSize };
      })
    ).value;
  const timing = await sizes(true);
  const full = await sizes(false);
  t.equal(timing.arena, 0, 'no tensor arena');
  // A slot is its header, rounded up to a 64-byte line: no payload bytes behind it.
  const headerLine = Math.ceil(SLOT.HEADER_BYTES / 64) * 64;
  t.same(timing.ipcq, timing.ipcq.map(() => timing.rings * timing.slots * headerLine), 'every channel set: rings x slots x one header line');
  // The same session with data backs the topology's slots (ideal: 8 x 64 KiB per ring) and the arena:
  // per slot a header with its inline payload, and a payload area.
  t.ok(full.slotSize > INLINE_PAYLOAD_BYTES && full.arena > 0);
  const inlineLine = Math.ceil((SLOT.HEADER_BYTES + INLINE_PAYLOAD_BYTES) / 64) * 64;
  t.same(full.ipcq, full.ipcq.map(() => full.rings * full.slots * (inlineLine + Math.ceil(full.slotSize / 64) * 64)));
});

t.test('with --no-data a ring all-reduce takes no tile slab memory: its tiles have a shape and no storage', async (t) => {
  const carved = async (noData: boolean) =>
    (await rt.session({ topology: 'ideal', sets: ['system.sips.count=4'], threads: 1, noData }, (torch) => torch.multiprocessing.spawn(slabBytesOfAllReduce, { args: [4096], nprocs: 4 }))).value;
  const full = await carved(false);
  t.ok(full.reduce((a, b) => a + b, 0) >= 4 * 4096 * 4, 'with data: at least the four loaded shards');
  t.same(await carved(true), [0, 0, 0, 0], 'timing only: none');
});

t.test("a timing-only tile's slices of one length are one frozen tile, made again when the blank buffer grows", (t) => {
  const whole = new Tile('f32', [64], blankF32(64));
  const a = whole.slice(0, 8);
  t.equal(whole.slice(16, 8), a, 'every 8-element slice is the same tile: no Tile per ring step');
  t.ok(Object.isFrozen(a.shape), 'its shape cannot be changed under another holder');
  t.same(a.shape, [8]);
  t.not(whole.slice(0, 9), a, 'another length, another tile');
  t.equal(new Tile('bf16', [64], blankF32(64)).slice(0, 8).dtype, 'bf16', 'one per dtype');
  blankF32(whole.data.buffer.byteLength / 4 + 1); // the buffer grows: its old views are no longer blank
  const again = new Tile('f32', [64], blankF32(64)).slice(0, 8);
  t.not(again, a);
  t.ok(isBlank(again.data), 'the new slice views the new blank buffer');
  t.end();
});

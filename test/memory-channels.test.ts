// Shared memory channels (issue 3, item 8): a cube's HBM bandwidth is shared
// by its PEs; the coordinator grants accesses in virtual-time order at
// quiescent states, so contention costs virtual time and stays deterministic.
import t from 'tap';
import { DPPolicy } from '../lib/host/dp-policy.js';
import { addOne } from './fixtures/kernels.js';
import { loadMany } from '../benches/memory_channels.js';
import { transferPs } from '../lib/time/virtual-time.js';
import { TestRuntime } from './helpers/run.js';
import type { RunConfig } from '../lib/bench/contract.js';

// The coordinator's timer (its pass when nothing rings) stretched to 5 s: no session here
// deadlocks, and every arbiter pass must be rung (the order test below).
const rt = new TestRuntime({ coordinatorTimerMs: 5000 });
t.teardown(() => rt.close());

const PER_PE = 64 * 1024; // f32 elements per PE: 256 KiB, so HBM bandwidth dominates

/** crit (ps) and data digest of addOne over `pes` PEs whose shards all live in cube 0's HBM. */
async function stream(pes: number, over: Partial<RunConfig> = {}) {
  const r = await rt.session(over, async (torch) => {
    const x = torch.zeros([1, PER_PE * pes], { dp: new DPPolicy({ pe: 'column_wise', numPes: pes }) });
    const h = torch.launch('add_one', addOne, x);
    await h;
    const out = await x.numpy();
    return { critPs: h.critPs, ok: out.data.every((v) => v === 1), timings: h.timings };
  });
  return { ...r.value, digest: r.digest };
}

t.test('two PEs streaming from one cube\'s HBM take longer than one alone', async (t) => {
  const one = await stream(1, { threads: 1 });
  const two = await stream(2, { threads: 1 });
  t.ok(one.ok && two.ok, 'results are right');
  t.ok(two.critPs > one.critPs, `two PEs: ${two.critPs} ps > one PE: ${one.critPs} ps`);
  const four = await stream(4, { threads: 1 });
  t.ok(four.critPs > two.critPs, `four PEs: ${four.critPs} ps > two PEs: ${two.critPs} ps`);
});

t.test('the contended run is identical under every thread layout and under jitter', async (t) => {
  // One SIP of one cube: exactly the 4 contending PEs, so --threads pe starts 4 threads, not 32 mostly idle ones.
  const sets = ['system.sips.count=1', 'sip.cube_mesh.w=1', 'sip.cube_mesh.h=1'];
  const ref = await stream(4, { threads: 1, sets });
  for (const over of [{ threads: 'rank' as const }, { threads: 'pe' as const }, { threads: 2 }, { threads: 'pe' as const, jitterSeed: 9 }, { threads: 1, jitterSeed: 4 }]) {
    const r = await stream(4, { ...over, sets });
    t.same({ timings: r.timings, digest: r.digest }, { timings: ref.timings, digest: ref.digest }, JSON.stringify(over));
  }
});

t.test('PEs of different cubes do not contend', async (t) => {
  const r = await rt.session({ threads: 1 }, async (torch) => {
    const one = torch.zeros([1, PER_PE], { dp: new DPPolicy({ cube: 'column_wise', numCubes: 1 }) });
    const h1 = torch.launch('add_one', addOne, one);
    await h1;
    const four = torch.zeros([1, PER_PE * 4], { dp: new DPPolicy({ cube: 'column_wise', numCubes: 4 }) });
    const h4 = torch.launch('add_one', addOne, four);
    await h4;
    return { one: h1.critPs, four: h4.critPs };
  });
  t.equal(r.value.four, r.value.one);
});

t.test('four PEs loading back to back from one HBM keep their order: each ends one channel slot after the previous, under every layout', async (t) => {
  // A request granted before an earlier one could still be asked (the arbiter read the
  // pending set outside its snapshot) breaks the order and changes crit, sometimes.
  // Every grant must also come from a rung pass: the coordinator's timer is 5 s in this
  // file, so a grant it made on its timer (unrungGrants) is a wake-up nobody sent, not a
  // ring still on its way (decision 0024).
  const LOADS = 400;
  const SHARD = 64; // f32: 256 B an access
  const sets = ['system.sips.count=1', 'sip.cube_mesh.w=1', 'sip.cube_mesh.h=1']; // the 4 PEs of one cube, 4 threads under --threads pe
  for (const threads of ['pe', 2, 'rank', 'pe', 2, 'pe'] as const) {
    const r = await rt.session({ threads, sets }, async (torch) => {
      const hbm = torch.spec.timing.memory.hbm;
      const one = torch.zeros([1, SHARD], { dtype: 'f32' });
      const h1 = torch.launch('load_many', loadMany, one, LOADS);
      await h1;
      const four = torch.zeros([1, SHARD * 4], { dtype: 'f32', dp: new DPPolicy({ pe: 'column_wise', numPes: 4 }) });
      const h4 = torch.launch('load_many', loadMany, four, LOADS);
      await h4;
      return { one: h1.critPs, four: h4.critPs, slot: transferPs(SHARD * 4, hbm.bandwidth_gb_s) };
    });
    t.equal(r.value.four - r.value.one, 3 * r.value.slot, `--threads ${threads}: the fourth PE ends 3 slots after a PE alone`);
    t.equal(r.report.unrungGrants, 0, `--threads ${threads}: every grant came from a pass something rang`);
  }
});

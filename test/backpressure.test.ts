// Backpressure (issue 2, item 18): with one slot per ring and a payload many
// times the slot size, senders wait for credits; results stay correct and
// deterministic under poll and sleep, and the waiting mode does not change
// virtual time (it only changes how a thread waits).
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

// 4096 f32 per rank over 3 ranks: ~5.4 KiB chunks cut into 256-byte pieces, one slot.
const tight = ['ccl.world_size=3', 'ccl.n_elem=4096', 'ccl.n_slots=1', 'ccl.slot_size=256', 'ccl.vc_chunk_size=256'];

t.test('n_slots=1: correct and identical under poll and sleep, every layout', async (t) => {
  const runs = [];
  for (const backpressure of ['poll', 'sleep']) {
    for (const threads of [1, 'rank', 'pe'] as const) {
      const [r] = await rt.bench('ccl_allreduce', { topology: 'ring_1d_6', dtype: 'f32', threads, sets: [...tight, `ccl.backpressure=${backpressure}`] });
      runs.push({ how: `${backpressure}/${threads}`, ok: r.ok, digest: r.digest, critNs: r.critNs });
    }
  }
  t.ok(runs.every((r) => r.ok), 'every run is correct');
  t.same(new Set(runs.map((r) => `${r.digest} ${r.critNs}`)).size, 1, `one digest and crit for all: ${JSON.stringify(runs)}`);
});

t.test('credits throttle: one slot is slower in virtual time than plenty of slots', async (t) => {
  const [one] = await rt.bench('ccl_allreduce', { topology: 'ring_1d_6', dtype: 'f32', threads: 1, sets: tight });
  const [many] = await rt.bench('ccl_allreduce', { topology: 'ring_1d_6', dtype: 'f32', threads: 1, sets: [...tight.filter((s) => !s.startsWith('ccl.n_slots')), 'ccl.n_slots=64'] });
  t.ok(one.critNs > many.critNs, `${one.critNs} ns with 1 slot > ${many.critNs} ns with 64`);
});

t.test('jitter under backpressure changes nothing observable', async (t) => {
  const [ref] = await rt.bench('ccl_allreduce', { topology: 'ring_1d_6', dtype: 'f32', threads: 1, sets: tight });
  for (const seed of [3, 11]) {
    const [r] = await rt.bench('ccl_allreduce', { topology: 'ring_1d_6', dtype: 'f32', threads: 'rank', jitterSeed: seed, sets: [...tight, 'ccl.backpressure=poll'] });
    t.same({ digest: r.digest, critNs: r.critNs }, { digest: ref.digest, critNs: ref.critNs }, `seed ${seed}`);
  }
});

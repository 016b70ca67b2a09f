// Executors collect their young generation when idle after a kernel epoch
// (lib/sync/young-gc.ts, decision 0009): it happens when on, never when
// off, and changes no result or virtual time.
import t from 'tap';
import { epochGcFromEnv } from '../lib/sync/young-gc.js';
import { garbage } from './fixtures/kernels.js';
import { TestRuntime } from './helpers/run.js';

/** Wall-clock pause after each launch, long enough for both executors to reach their park point (gates nothing the test asserts). */
const IDLE_MS = 20;

/** Five launches of a kernel that leaves its thread's nursery 60 % full, each followed by a host read; the report and what the run computed. */
async function run(epochGc: boolean) {
  const rt = new TestRuntime({ epochGc });
  try {
    const r = await rt.session({ threads: 2 }, async (torch) => {
      const x = torch.zeros([64], { name: 'x' });
      let values: number[] = [];
      for (let i = 0; i < 5; i++) {
        await torch.launch('garbage', garbage, x, 0.6);
        values = Array.from((await x.numpy()).data);
        // Let the executors go idle before the next launch: an executor whose next command is
        // already queued when its epoch ends never parks, so it never collects (the test
        // failed now and then with 0 collections, under --max-semi-space-size 8 and 4 alike).
        await new Promise((r) => setTimeout(r, IDLE_MS));
      }
      return { values, critPs: torch.host.clockPs };
    });
    return { epochGcs: r.report.epochGcs, records: r.report.records, ...r.value };
  } finally {
    await rt.close();
  }
}

t.test('an executor idle after a kernel epoch collects its young generation; turned off, it never does; results and virtual times are the same', async (t) => {
  const on = await run(true);
  const off = await run(false);
  t.ok(on.epochGcs >= 1, `idle-time collections when on (got ${on.epochGcs})`);
  t.equal(off.epochGcs, 0, 'none when off');
  t.same(on.values, new Array(64).fill(5), 'five launches added 1 each');
  t.same(on.values, off.values);
  t.same(on.records, off.records, 'every PE record (virtual start and end of each kernel) is the same');
  t.equal(on.critPs, off.critPs);
});

t.test('KERNBENCH_EPOCH_GC=0 turns the collections off; anything else leaves them on', async (t) => {
  t.equal(epochGcFromEnv({ KERNBENCH_EPOCH_GC: '0' }), false);
  t.equal(epochGcFromEnv({}), true);
  t.equal(epochGcFromEnv({ KERNBENCH_EPOCH_GC: '1' }), true);
});

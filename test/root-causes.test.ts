// Root causes of a failed spawn do not depend on timing (issue 13, item 6):
// every rank that fails on its own is named, because the other ranks are
// aborted only once nothing else can happen in the session (ADR 0015). Before,
// the first failure to reach main aborted the rest at once, and a rank that
// was about to fail by itself was listed or not depending on the scheduler.
import t from 'tap';
import { SpawnError } from '../lib/public/index.js';
import type { RunConfig } from '../lib/bench/contract.js';
import { multiFailWorker } from './fixtures/faults.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [new URL('./fixtures/faults.js', import.meta.url).href] });
t.teardown(() => rt.close());

/** Ranks 1 and 3 fail by themselves, rank 1 at once, rank 3 after local kernels; ranks 0 and 2 wait in a barrier. */
const FAIL_AFTER: Record<number, number> = { 1: 0, 3: 6 };

async function rootCauses(over: Partial<RunConfig>): Promise<number[]> {
  const r = await rt.session({ topology: 'ring_1d_6', ...over }, async (torch) => {
    const e = await torch.multiprocessing.spawn(multiFailWorker, { args: [FAIL_AFTER], nprocs: 4 }).catch((x: unknown) => x);
    if (!(e instanceof SpawnError)) throw new Error(`expected a SpawnError, got ${String(e)}`);
    return [...e.errors.keys()];
  });
  return r.value;
}

t.test('several ranks failing at different times: the same root causes in every run, layout and jitter seed', { timeout: 25_000 }, async (t) => {
  const runs: { how: string; ranks: number[] }[] = [];
  for (let i = 0; i < 4; i++) runs.push({ how: `--threads rank, run ${i}`, ranks: await rootCauses({ threads: 'rank' }) });
  for (let i = 0; i < 4; i++) runs.push({ how: `--threads 1, run ${i}`, ranks: await rootCauses({ threads: 1 }) });
  for (const seed of [1, 2, 3, 4]) runs.push({ how: `--threads rank, KERNBENCH_JITTER=${seed}`, ranks: await rootCauses({ threads: 'rank', jitterSeed: seed }) });
  const expected = Object.keys(FAIL_AFTER).map(Number);
  t.same(runs.filter((r) => JSON.stringify(r.ranks) !== JSON.stringify(expected)), [], `every run names exactly the ranks that fail on their own (${expected.join(', ')})`);
});

// Runs on: main thread (tap). Covers: the golden event logs of --log (issue 15
// item 4, lib/trace/event-log.ts): one line per IPCQ piece and per kernel start
// and end, in virtual-time order, compared whole against test/golden/log/*.txt,
// and the same log under every --threads layout and under jitter.
//
// The golden files were obtained by running these scenarios and checked by hand
// against docs/timing.md on the ideal topology (alpha 1000 ns, beta 100 GB/s,
// everything else free; see docs/trace.md "The event log"). To regenerate them
// after a deliberate change of timing or format:
//   npm run build && KERNBENCH_UPDATE_GOLDEN=1 npx tap dist/test/event-log.test.js
// then read the diff (git diff test/golden/log) before committing it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { RunConfig } from '../lib/bench/contract.js';
import { DeadlockError } from '../lib/errors.js';
import { CCL_FIXTURES, helloWorker } from './fixtures/ccl.js';
import { deadlockWorker } from './fixtures/kernels.js';
import { ROOT } from './helpers/cli.js';
import { TestRuntime } from './helpers/run.js';

const UPDATE_GOLDEN = process.env.KERNBENCH_UPDATE_GOLDEN === '1';
const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());

/** A scenario: runs with `over` (an eventLog sink added) and returns its whole log text. */
type Scenario = (over: Partial<RunConfig>) => Promise<string>;

/** Collect every line the run logs; `run` gets the config overrides to pass on. */
async function logOf(run: (over: Partial<RunConfig>) => Promise<unknown>, layout: Partial<RunConfig>): Promise<string> {
  const lines: string[] = [];
  await run({ ...layout, eventLog: (l) => lines.push(...l) });
  return `${lines.join('\n')}\n`;
}

const scenarios: Record<string, Scenario> = {
  // Rank 0 sends 256 f32 (1 KiB, one piece) to rank 1 over one hop.
  hello_send: (over) => logOf((o) => rt.session({ topology: 'ideal_ring_1d_6', ...o }, (torch) => torch.multiprocessing.spawn(helloWorker, { args: [256, 'f32'], nprocs: 2 })), over),
  // The ring all-reduce on 3 ranks: 2 (p - 1) = 4 steps of N/p elements.
  ring_3: (over) => logOf((o) => rt.bench('ccl_allreduce', { topology: 'ideal_ring_1d_6', sets: ['ccl.world_size=3', 'ccl.n_elem=96'], ...o }), over),
  // 4 KiB in 1 KiB pieces through a ring of one slot: every piece after the first waits for the credit of the one before.
  credit_stream: (over) =>
    logOf((o) => rt.session({ topology: 'ideal_ring_1d_6', sets: ['ccl.n_slots=1', 'ccl.vc_chunk_size=1024'], ...o }, (torch) => torch.multiprocessing.spawn(helloWorker, { args: [1024, 'f32'], nprocs: 2 })), over),
  // Every PE receives before it sends: nothing is logged but the kernels' starts and their ends when the run stops; the report follows.
  deadlock: async (over) => {
    let report = '';
    const log = await logOf(
      (o) =>
        rt.session({ topology: 'ideal_ring_1d_6', ...o }, async (torch) => {
          try {
            await torch.multiprocessing.spawn(deadlockWorker, { nprocs: 3 });
          } catch (e) {
            if (!(e instanceof DeadlockError)) throw e;
            report = `deadlock report:\n${e.waiters.map((w) => `  ${w}`).join('\n')}\n`;
          }
        }),
      over,
    );
    return log + report;
  },
};

for (const [name, scenario] of Object.entries(scenarios)) {
  t.test(`the ${name} scenario logs exactly its golden file`, async (t) => {
    const file = join(ROOT, 'test', 'golden', 'log', `${name}.txt`);
    const got = await scenario({ threads: 'rank', jitterSeed: null });
    if (UPDATE_GOLDEN) writeFileSync(file, got);
    t.equal(got, readFileSync(file, 'utf8'));
  });
}

t.test('the logs are the same under --threads 1, pe and jitter', async (t) => {
  for (const name of ['ring_3', 'credit_stream'] as const) {
    const ref = await scenarios[name]({ threads: 1, jitterSeed: null });
    t.equal(await scenarios[name]({ threads: 'pe', jitterSeed: null }), ref, `${name} under --threads pe`);
    t.equal(await scenarios[name]({ threads: 'rank', jitterSeed: 7 }), ref, `${name} under jitter`);
  }
});

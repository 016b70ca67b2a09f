// The race check (--check-races; docs/determinism.md, "Data races"): two actors
// touching the same device bytes, at least one writing, with no IPCQ message,
// barrier, launch/wait or spawn/join ordering them, fail the run with
// ERR_DATA_RACE naming both actors, the tensor, the range and the times.
import t from 'tap';
import { KernbenchError } from '../lib/public/index.js';
import type { RunConfig } from '../lib/bench/contract.js';
import type { ThreadLayout } from '../lib/config/plan.js';
import { barrierWriter, producerConsumer, racyWriter } from './fixtures/races.js';
import { sumWorker } from './fixtures/kernels.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [new URL('./fixtures/races.js', import.meta.url).href] });
t.teardown(() => rt.close());

/** Six ranks store rank + 1 into main's tensor; main reads it back. */
function sixWriters(over: Partial<RunConfig>) {
  return rt.session({ topology: 'ring_1d_6', ...over }, async (torch) => {
    const shared = torch.zeros([4], { name: 'shared' });
    await torch.multiprocessing.spawn(racyWriter, { args: [shared.toDesc()], nprocs: 6 });
    return (await shared.numpy()).data[0];
  });
}

async function raceOf(run: Promise<unknown>): Promise<KernbenchError> {
  const e = await run.then(() => undefined, (x: unknown) => x);
  if (!(e instanceof KernbenchError)) throw new Error(`expected a KernbenchError, got ${String(e)}`);
  return e;
}

t.test('six ranks storing into one tensor unordered: ERR_DATA_RACE names both actors, the tensor, the range and the times, the same message under --threads 1, rank and pe', async (t) => {
  const reports: string[] = [];
  for (const threads of [1, 'rank', 'pe', 'rank'] as ThreadLayout[]) {
    const e = await raceOf(sixWriters({ threads, checkRaces: true }));
    t.equal(e.code, 'ERR_DATA_RACE', `--threads ${threads}`);
    t.match(e.message, /tensor 'shared', elements \[0, 4\)/, 'the tensor and the range');
    t.match(e.message, /kernel 'storeValue' on .* \(launched by rank 0's host\) writes at [\d.]+ ns and kernel 'storeValue' on .* \(launched by rank 1's host\) writes at [\d.]+ ns/, 'both actors (the first pair in rank order), with their times');
    t.type(e.atPs, 'number', 'the later access time');
    // The stores onto main's tensor run in (virtual time, rank) order on its shared PE
    // (decision 0090), so their times, and the whole message, are the same in every layout.
    reports.push(e.message);
  }
  for (let i = 1; i < reports.length; i++) t.equal(reports[i], reports[0], `the same message, times included, in layout ${i} as under --threads 1`);
});

t.test('without --check-races the racy program runs: no error, and the digest is the same', async (t) => {
  const a = await sixWriters({});
  const b = await sixWriters({ threads: 1 });
  t.ok([1, 2, 3, 4, 5, 6].includes(a.value), 'some rank won');
  t.equal(a.digest, b.digest, 'digest unchanged (it covers virtual times, which the race did not change)');
});

t.test('the same stores separated by barriers: no race', async (t) => {
  const r = await rt.session({ topology: 'ring_1d_6', checkRaces: true }, async (torch) => {
    const shared = torch.zeros([4], { name: 'shared' });
    await torch.multiprocessing.spawn(barrierWriter, { args: [shared.toDesc()], nprocs: 6 });
    return (await shared.numpy()).data[0];
  });
  t.equal(r.value, 6, 'the last turn wins');
});

t.test('a ring all-reduce over six ranks: no race', async (t) => {
  const r = await rt.session({ topology: 'ring_1d_6', checkRaces: true }, (torch) => torch.multiprocessing.spawn(sumWorker, { args: [12], nprocs: 6 }));
  t.equal(r.value.length, 6);
});

t.test('a producer that messages its consumer over the IPCQ before the consumer writes: no race; without the message: ERR_DATA_RACE', async (t) => {
  const run = (message: boolean) =>
    rt.session({ topology: 'ring_1d_6', checkRaces: true }, async (torch) => {
      const x = torch.zeros([4], { name: 'x' });
      await torch.multiprocessing.spawn(producerConsumer, { args: [x.toDesc(), message], nprocs: 2 });
      return (await x.numpy()).data[0];
    });
  t.equal((await run(true)).value, 2, 'ordered: rank 1 writes last');
  const e = await raceOf(run(false));
  t.equal(e.code, 'ERR_DATA_RACE');
  t.match(e.message, /tensor 'x'.*kernel 'handoff' .*launched by rank 0's host\) writes .* kernel 'storeValue' .*launched by rank 1's host\) writes/);
});

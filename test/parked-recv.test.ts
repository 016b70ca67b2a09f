// Runs on: main thread (tap). Covers: receives issued before their data exists
// (lib/ipcq/channel.ts: a parked receive on an idle channel, and the queued
// receives behind it, which chain on its op): each message lands in its own
// place, a message with more pieces than its ring has slots hands its credits
// back as it goes, and the virtual times are those of the queued path, which
// jitter always takes, under every thread layout. A kernel whose receives
// all park does not keep them tracked for its end (drain) once waited for.
import t from 'tap';
import { SIZES, type ParkedOut } from './fixtures/parked.js';
import { TestRuntime } from './helpers/run.js';

const FIXTURE = new URL('./fixtures/parked.js', import.meta.url).href;
const rt = new TestRuntime({ modules: [FIXTURE] });
t.teardown(() => rt.close());

/** 4 slots of 1 KiB pieces: the first message (16 KiB) has four times as many pieces as its ring has slots. */
const WINDOW = ['ccl.n_slots=4', 'ccl.vc_chunk_size=1024', 'ccl.slot_size=1024'];

async function run(threads: 'rank' | 'pe' | number, jitterSeed: number | null = null, kernel: 'lateSender' | 'pingPong' = 'lateSender'): Promise<ParkedOut[]> {
  const { parkedWorker } = await import('./fixtures/parked.js');
  const s = await rt.session({ topology: 'ideal', threads, jitterSeed, sets: ['system.sips.count=2', ...WINDOW] }, (torch) => torch.multiprocessing.spawn(parkedWorker, { args: [kernel], nprocs: 2 }));
  return s.value as ParkedOut[];
}

t.test('three receives issued before the sender could send: the values in order, the same times in every layout and under jitter', async (t) => {
  const n = SIZES.reduce((a, b) => a + b, 0);
  const ref = await run(1);
  t.same(ref[0].values, Array.from({ length: n }, (_, i) => 1000 + i), 'rank 0 holds the three messages end to end');
  t.ok(ref[0].critNs > 0);
  for (const [name, got] of [
    ['--threads rank', await run('rank')],
    ['--threads pe', await run('pe')],
    ['--threads 2', await run(2)],
    ['jitter 1', await run('rank', 1)],
    ['jitter 2', await run(1, 2)],
  ] as const) {
    t.same(got, ref, `${name}: data and crit_ns equal --threads 1's`);
  }
});

t.test('40 receives that each parked and were waited for: the kernel keeps none of them for its end', async (t) => {
  const [r0] = await run(1, null, 'pingPong');
  t.equal(r0.values[0], 40, 'the ping came back 40 times, one more each time');
  t.equal(r0.values[1], 0, 'no receive op left tracked for drain');
});

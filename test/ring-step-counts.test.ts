// Runs on: main thread (tap). Covers: what a ring step costs in promises on one
// thread (decision 0175): a step's receive settled at once makes no promise of
// its own and queues no release job, its send completed at once no handle, so
// the ring all-reduce makes about one promise a message (the await of the step's
// receive), not two or three; and its all-gather cuts no chunk view (a Tile, a
// shape and a typed array; decision 0176), so a step cuts half a view on
// average (the reduce-scatter's). Counted, not timed: the promises the thread makes
// around a kernel of three ring all-reduces less those around one of one, over
// the messages of two (the launches, barriers and loads cancel).
import t from 'tap';
import type { Counted } from './fixtures/step-promises.js';
import { TestRuntime } from './helpers/run.js';

const FIXTURE = new URL('./fixtures/step-promises.js', import.meta.url).href;
const rt = new TestRuntime({ modules: [FIXTURE] });
t.teardown(() => rt.close());

const P = 8;
/** One 1 KiB piece a chunk at the default vc_chunk_size: one message a step. */
const N_ELEM = P * 256;
const MESSAGES = 2 * (P - 1) * P;

async function counted(rounds: number): Promise<Counted> {
  const { promisesAround } = await import('./fixtures/step-promises.js');
  const s = await rt.session({ topology: 'ideal', threads: 1, sets: [`system.sips.count=${P}`] }, (torch) => torch.multiprocessing.spawn(promisesAround, { args: [N_ELEM, rounds], nprocs: P }));
  const ranks = s.value as Counted[];
  t.ok(ranks.every((r) => r.ok), `every element p^${rounds} after ${rounds} all-reduces`);
  return ranks[0];
}

t.test('a ring all-reduce under --threads 1 makes about one promise and half a chunk view a message', async (t) => {
  const one = await counted(1);
  const three = await counted(3);
  const perMessage = (three.promises - one.promises) / (2 * MESSAGES);
  const viewsPerMessage = (three.views - one.views) / (2 * MESSAGES);
  t.ok(viewsPerMessage >= 0.5 - 1e-9 && viewsPerMessage < 0.75, `one view a reduce-scatter step, none an all-gather step (one a step would be 1), got ${viewsPerMessage.toFixed(2)}`);
  t.ok(perMessage > 0.5, `the steps' awaits are counted: ${perMessage.toFixed(2)} promises a message`);
  t.ok(perMessage < 1.5, `at most about one promise a message (a release job and a receive's promise a step would be two or three), got ${perMessage.toFixed(2)}`);
});

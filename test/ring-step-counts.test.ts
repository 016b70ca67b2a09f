// Runs on: main thread (tap). Covers: what a ring step costs in promises on one
// thread (decision 0175): a step's receive settled at once makes no promise of
// its own and queues no release job, its send completed at once no handle, so
// the ring all-reduce makes about one promise a message (the reaction that
// resumes the step), not two or three; that promise carries no fault-owner tag
// (decision 0195: an await's did); and neither pass cuts a chunk view a step (a
// Tile, a shape and a typed array; decisions 0176 and 0195). Counted, not timed: the promises the thread makes
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

t.test('a ring all-reduce under --threads 1 makes about one promise a message, few of them tagged, and no chunk view a step', async (t) => {
  const one = await counted(1);
  const three = await counted(3);
  const perMessage = (three.promises - one.promises) / (2 * MESSAGES);
  const viewsPerMessage = (three.views - one.views) / (2 * MESSAGES);
  const taggedPerMessage = (three.tagged - one.tagged) / (2 * MESSAGES);
  t.ok(viewsPerMessage < 0.1, `no view a step in either pass (one a reduce-scatter step would be 0.5), got ${viewsPerMessage.toFixed(2)}`);
  t.ok(taggedPerMessage < 0.5, `a step resumes through a promise with no owner tag (an await's, tagged, would be 1 a message), got ${taggedPerMessage.toFixed(2)}`);
  t.ok(perMessage > 0.5, `the steps' yields are counted: ${perMessage.toFixed(2)} promises a message`);
  t.ok(perMessage < 1.5, `at most about one promise a message (a release job and a receive's promise a step would be two or three), got ${perMessage.toFixed(2)}`);
});

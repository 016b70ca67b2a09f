// Runs on: main thread (tap). Covers: benches/sim/alloc-worker.ts's postNow, how the
// allocation script asks its thread's inspector for the heap profile: the answer when
// the inspector gives it at once, and a failure, not a wait that never ends, when it
// gives none (as it does for a profile too large to hand over).
import { Session } from 'node:inspector';
import t from 'tap';
import { postNow } from '../benches/sim/alloc-worker.js';

t.test('postNow gives the answer of a session on its own thread, and fails when none comes before post returns', async (t) => {
  const session = new Session();
  session.connect();
  try {
    const r = postNow<{ result: { value: number } }>(session, 'Runtime.evaluate', { expression: '6 * 7', returnByValue: true });
    t.equal(r.result.value, 42, 'the answer');
    // An evaluation that awaits a promise never settled: the inspector answers later, never here.
    t.throws(() => postNow(session, 'Runtime.evaluate', { expression: 'new Promise(() => {})', awaitPromise: true }), /gave no answer to Runtime\.evaluate/);
    let refused: unknown;
    try {
      postNow(session, 'No.suchMethod');
    } catch (e) {
      refused = e;
    }
    t.ok(refused instanceof Error && !/gave no answer/.test(refused.message), `an error answer is thrown as it came: ${String(refused)}`);
  } finally {
    session.disconnect();
  }
});

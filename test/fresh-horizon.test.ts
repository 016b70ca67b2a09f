// Runs on: main thread (tap). Covers: when a thread's checks of shared links take
// a fresh launch horizon (lib/ipcq/link-timing.ts freshHorizonDue, decision 0267):
// every PEs messages (at least 16) while some piece of the session is held for its
// links, and four times as many while none is.
import t from 'tap';
import { HEADER } from '../lib/shm/layout.js';
import { QUIET_SPACING, freshHorizonDue } from '../lib/ipcq/link-timing.js';

const session = (held: number) => {
  const ctl = new Int32Array(new SharedArrayBuffer(256));
  ctl[HEADER.HELD_PENDING] = held;
  return { ctl, load: (word: number) => Atomics.load(ctl, word) };
};

t.test('with no piece held, a fresh horizon is due after QUIET_SPACING x PEs messages, not after PEs', async (t) => {
  const sh = session(0);
  t.equal(QUIET_SPACING, 4);
  t.notOk(freshHorizonDue(sh, 1023, 1024));
  t.notOk(freshHorizonDue(sh, 1024, 1024), 'PEs messages are not enough');
  t.notOk(freshHorizonDue(sh, 4095, 1024));
  t.ok(freshHorizonDue(sh, 4096, 1024));
});

t.test('with a piece held, it is due after PEs messages (at least 16)', async (t) => {
  const sh = session(1);
  t.notOk(freshHorizonDue(sh, 1023, 1024));
  t.ok(freshHorizonDue(sh, 1024, 1024));
  t.notOk(freshHorizonDue(sh, 15, 4), 'at least 16 messages on a small machine');
  t.ok(freshHorizonDue(sh, 16, 4));
});

t.test('the held count is what the session says now', async (t) => {
  const sh = session(0);
  t.notOk(freshHorizonDue(sh, 2000, 1024));
  sh.ctl[HEADER.HELD_PENDING] = 3;
  t.ok(freshHorizonDue(sh, 2000, 1024));
  sh.ctl[HEADER.HELD_PENDING] = 0;
  t.notOk(freshHorizonDue(sh, 2000, 1024));
});

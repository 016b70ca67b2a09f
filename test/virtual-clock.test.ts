// Runs on: main thread (tap). Covers: lib/time/virtual-clock.ts — the one
// writer of virtual time: forward by a cost, forward to an event, never back.
import t from 'tap';
import { VirtualClock } from '../lib/time/virtual-clock.js';

t.test('a clock starts at 0, advance adds a cost and advanceTo moves to a later event only', async (t) => {
  const c = new VirtualClock();
  const log: [string, number][] = [['start', c.nowPs]];
  log.push(['advance 250', c.advance(250)]);
  log.push(['event at 1000', c.advanceTo(1000)]);
  log.push(['event at 400 (earlier)', c.advanceTo(400)]);
  log.push(['advance 0', c.advance(0)]);
  log.push(['event at 1000 (same)', c.advanceTo(1000)]);
  log.push(['advance 1', c.advance(1)]);
  t.same(log, [
    ['start', 0],
    ['advance 250', 250],
    ['event at 1000', 1000],
    ['event at 400 (earlier)', 1000],
    ['advance 0', 1000],
    ['event at 1000 (same)', 1000],
    ['advance 1', 1001],
  ]);
});

t.test('a negative or fractional cost is refused and leaves the clock where it was', async (t) => {
  const c = new VirtualClock();
  c.advance(10);
  t.throws(() => c.advance(-1), { code: 'ERR_INTERNAL' });
  t.throws(() => c.advance(0.5), { code: 'ERR_INTERNAL' });
  t.throws(() => c.advance(Number.NaN), { code: 'ERR_INTERNAL' });
  t.throws(() => c.advanceTo(20.5), { code: 'ERR_INTERNAL' });
  t.equal(c.nowPs, 10);
});

t.test('two clocks are independent (one per actor)', async (t) => {
  const a = new VirtualClock();
  const b = new VirtualClock();
  a.advance(5);
  b.advanceTo(7);
  t.same([a.nowPs, b.nowPs], [5, 7]);
});

// Runs on: main thread (tap). Covers: lib/sync/waiter-table.ts's wakeAll, a
// thread's sweep when another thread rang it (decision 0264): it resolves the
// waiters whose word reached their target and keeps the others; every released
// waiter is settled and out of the table before the first is resolved (a resolve
// may publish, park again or sweep); a waiter that parks again from a resolve
// waits for the next sweep.
import t from 'tap';
import { WaiterTable, type Waiter } from '../lib/sync/waiter-table.js';

function waiter(word: number, target: number, onResolve: (w: Waiter) => void = () => {}): Waiter & { resolved: number } {
  const w = {
    word,
    target,
    broadcast: false,
    settled: false,
    resolved: 0,
    resolve(): void {
      w.resolved++;
      onResolve(w);
    },
    reject(): void {
      throw new Error('not rejected here');
    },
  };
  return w;
}

t.test('wakeAll resolves the waiters whose word reached their target and keeps the others', async (t) => {
  const ctl = new Int32Array(8);
  const table = new WaiterTable(ctl);
  const a = waiter(1, 1);
  const b = waiter(1, 2);
  const c = waiter(2, 1);
  const d = waiter(3, 5);
  for (const w of [a, b, c, d]) table.add(w);
  ctl[1] = 1;
  ctl[2] = 3;
  table.wakeAll();
  t.same([a.resolved, b.resolved, c.resolved, d.resolved], [1, 0, 1, 0], 'a and c reached their targets');
  t.same([a.settled, b.settled, c.settled, d.settled], [true, false, true, false]);
  t.equal(table.count, 2, 'b and d stay');
  table.wakeAll();
  t.same([a.resolved, c.resolved], [1, 1], 'a released waiter is resolved once');
  ctl[1] = 2;
  ctl[3] = 5;
  table.wakeAll();
  t.same([b.resolved, d.resolved], [1, 1]);
  t.equal(table.count, 0);
  // A word emptied by a sweep takes new waiters again.
  const e = waiter(2, 4);
  table.add(e);
  ctl[2] = 4;
  table.wake(2);
  t.equal(e.resolved, 1);
  t.equal(table.count, 0);
});

t.test('every released waiter is out of the table before the first resolve runs', async (t) => {
  const ctl = new Int32Array(8);
  const table = new WaiterTable(ctl);
  const seen: { count: number; othersSettled: boolean }[] = [];
  const all: Waiter[] = [];
  const onResolve = (): void => {
    seen.push({ count: table.count, othersSettled: all.every((w) => w.settled) });
  };
  for (const word of [1, 2, 3]) {
    const w = waiter(word, 1, onResolve);
    all.push(w);
    table.add(w);
  }
  const stays = waiter(4, 1);
  table.add(stays);
  ctl[1] = ctl[2] = ctl[3] = 1;
  table.wakeAll();
  t.equal(seen.length, 3);
  t.same(seen, [0, 1, 2].map(() => ({ count: 1, othersSettled: true })), 'each resolve finds only the waiter not released in the table');
});

t.test('a waiter parked again by a resolve, on a word already reached, waits for the next sweep', async (t) => {
  const ctl = new Int32Array(8);
  const table = new WaiterTable(ctl);
  const again = waiter(2, 1);
  const first = waiter(1, 1, () => table.add(again));
  table.add(first);
  ctl[1] = 1;
  ctl[2] = 1;
  table.wakeAll();
  t.equal(first.resolved, 1);
  t.equal(again.resolved, 0, 'not resolved by the sweep that parked it');
  t.equal(table.count, 1);
  table.wakeAll();
  t.equal(again.resolved, 1);
  t.equal(table.count, 0);
});

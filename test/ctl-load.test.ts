// Runs on: main thread (tap) and worker threads. Covers: a session's `ctl` words as a
// shared WebAssembly memory and the load, store and add through it (lib/shm/ctl-load.ts,
// decisions 0278, 0280 and 0291): the load reads what Atomics stores and Atomics reads what
// the store stores, in this thread and from another one that was posted the memory; the add
// is Atomics.add's, atomic across threads; and without a memory they are Atomics.load,
// Atomics.store and Atomics.add.
import t from 'tap';
import { Worker } from 'node:worker_threads';
import { ctlBuffer, wordAccess } from '../lib/shm/ctl-load.js';
import { SharedState } from '../lib/shm/shared-state.js';

t.test('the load reads what Atomics stores, at every word', async (t) => {
  const { buffer, memory } = ctlBuffer(100_000);
  t.ok(memory !== null, 'WebAssembly is there: a shared memory');
  t.ok(buffer.byteLength >= 400_000, 'holding every word');
  const ctl = new Int32Array(buffer);
  const { load, store } = wordAccess(memory, ctl);
  for (const w of [0, 1, 31, 32, 65_535, 99_999]) {
    Atomics.store(ctl, w, w * 7 - 3);
    t.equal(load(w), w * 7 - 3, `word ${w}`);
  }
  Atomics.store(ctl, 5, -1);
  t.equal(load(5), -1, 'a negative word');
  for (const w of [0, 2, 33, 65_534, 99_998]) {
    const next = ctl[w + 1];
    store(w, 1000 - w * 5);
    t.equal(Atomics.load(ctl, w), 1000 - w * 5, `a store at word ${w}`);
    t.equal(ctl[w + 1], next, `and not at word ${w + 1}`);
  }
  store(7, -2_147_483_648);
  t.equal(Atomics.load(ctl, 7), -2_147_483_648, 'the lowest int32');
});

t.test('another thread, posted the memory, loads what this one stores', async (t) => {
  const sh = SharedState.create({ executors: 1, pes: 4, hosts: 1, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 1024 });
  t.ok(sh.buffers.ctlMemory !== null);
  Atomics.store(sh.ctl, 40, 12345);
  const url = new URL('../lib/shm/ctl-load.js', import.meta.url).href;
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(${JSON.stringify(url)}).then(({ wordAccess }) => {
       const { load, store } = wordAccess(workerData.memory, new Int32Array(workerData.buffer));
       const first = load(40);
       Atomics.store(new Int32Array(workerData.buffer), 41, 777);
       store(42, 888);
       parentPort.postMessage(first);
     });`,
    { eval: true, workerData: { memory: sh.buffers.ctlMemory, buffer: sh.buffers.ctl } },
  );
  const first = await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  t.equal(first, 12345, "the worker's load saw this thread's store");
  t.equal(sh.load(41), 777, "and this thread's load saw the worker's");
  t.equal(Atomics.load(sh.ctl, 42), 888, "and the worker's store reached this thread");
  sh.store(43, 999);
  t.equal(Atomics.load(sh.ctl, 43), 999, "this thread's store, through SharedState");
});

t.test('without a memory the load, store and add are Atomics on the array', async (t) => {
  const ctl = new Int32Array(new SharedArrayBuffer(64));
  const { load, store, add } = wordAccess(null, ctl);
  Atomics.store(ctl, 3, 99);
  t.equal(load(3), 99);
  store(4, -5);
  t.equal(Atomics.load(ctl, 4), -5);
  t.equal(add(4, 7), -5, 'the add gives the value before');
  t.equal(Atomics.load(ctl, 4), 2);
});

t.test("the add gives what Atomics.add gives, and leaves what it leaves, at every word", async (t) => {
  const { buffer, memory } = ctlBuffer(100_000);
  const ctl = new Int32Array(buffer);
  const mirror = new Int32Array(new SharedArrayBuffer(ctl.length * 4));
  const { add } = wordAccess(memory, ctl);
  const cases: [number, number, number][] = [[0, 0, 1], [1, 5, -7], [31, -3, 3], [65_535, 2_147_483_647, 1], [99_999, -2_147_483_648, -1], [7, 123_456, 2_000_000_000]];
  for (const [w, start, by] of cases) {
    Atomics.store(ctl, w, start);
    Atomics.store(mirror, w, start);
    const next = ctl[w + 1];
    t.equal(add(w, by), Atomics.add(mirror, w, by), `word ${w}: ${start} + ${by}, the value before`);
    t.equal(Atomics.load(ctl, w), Atomics.load(mirror, w), `word ${w}: the value after (int32, wrapping)`);
    if (w + 1 < ctl.length) t.equal(ctl[w + 1], next, `and not word ${w + 1}`);
  }
});

// Two threads add to one word at once: with a load and a store in place of the add, some of
// the adds are lost (checked). The count is fixed: nothing here reads the clock.
t.test('adds from two threads at once are all counted', async (t) => {
  const adds = 200_000;
  const { buffer, memory } = ctlBuffer(64);
  const url = new URL('../lib/shm/ctl-load.js', import.meta.url).href;
  const side = (): Promise<void> => {
    const w = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       import(${JSON.stringify(url)}).then(({ wordAccess }) => {
         const { adds, memory, buffer } = workerData;
         const ctl = new Int32Array(buffer);
         const { add } = wordAccess(memory, ctl);
         // Start together: the second to arrive wakes the first.
         if (Atomics.add(ctl, 0, 1) === 1) Atomics.notify(ctl, 0); else Atomics.wait(ctl, 0, 1);
         for (let i = 0; i < adds; i++) add(9, 1);
         parentPort.postMessage(0);
       });`,
      { eval: true, workerData: { adds, memory, buffer } },
    );
    return new Promise((resolve, reject) => {
      w.once('message', () => void w.terminate().then(() => resolve()));
      w.once('error', reject);
    });
  };
  await Promise.all([side(), side()]);
  t.equal(Atomics.load(new Int32Array(buffer), 9), 2 * adds, `${2 * adds} adds, every one counted`);
});

// Dekker's pair, the order the IPCQ's wake-ups rely on (lib/ipcq/ring.ts): each thread stores
// its own word, then loads the other's. Under sequentially consistent stores and loads at
// least one of the two sees the other's store in every round. With the store made a plain
// one (x86 lets it pass the later load), this test fails (decision 0280 has the counts);
// under load the two threads overlap less and such rounds are rarer. The round count is
// fixed: nothing here reads the clock.
t.test("the store is ordered before a later load, as Atomics.store's is", async (t) => {
  const rounds = 20_000;
  const { buffer, memory } = ctlBuffer(4096);
  const url = new URL('../lib/shm/ctl-load.js', import.meta.url).href;
  const side = (id: number): Promise<Int32Array> => {
    const w = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       import(${JSON.stringify(url)}).then(({ wordAccess }) => {
         const { id, rounds, memory, buffer } = workerData;
         const ctl = new Int32Array(buffer);
         const { load, store } = wordAccess(memory, ctl);
         const saw = new Int32Array(rounds);
         for (let i = 0; i < rounds; i++) {
           // Both threads start round i together: the second to arrive wakes the first, which
           // spins a while and then waits (a wait for a value already gone returns at once).
           if (Atomics.add(ctl, 0, 1) + 1 === 2 * (i + 1)) Atomics.notify(ctl, 0);
           for (let spins = 0, v; (v = Atomics.load(ctl, 0)) < 2 * (i + 1); spins++) if (spins > 100000) Atomics.wait(ctl, 0, v);
           const pair = 64 + 2 * (i % 1000);
           store(pair + id, i + 1);
           saw[i] = load(pair + 1 - id) === i + 1 ? 1 : 0;
         }
         parentPort.postMessage(saw);
       });`,
      { eval: true, workerData: { id, rounds, memory, buffer } },
    );
    return new Promise((resolve, reject) => {
      w.once('message', (m: Int32Array) => void w.terminate().then(() => resolve(m)));
      w.once('error', reject);
    });
  };
  const [a, b] = await Promise.all([side(0), side(1)]);
  let neither = 0;
  for (let i = 0; i < rounds; i++) if (a[i] === 0 && b[i] === 0) neither++;
  t.equal(neither, 0, `in ${rounds} rounds, none where neither thread saw the other's store`);
});

// Runs on: main thread (tap) and one worker thread. Covers: a session's `ctl` words as a
// shared WebAssembly memory and the load through it (lib/shm/ctl-load.ts, decision 0278):
// it reads what Atomics stores, in this thread and from another one that was posted the
// memory; and without a memory it is Atomics.load.
import t from 'tap';
import { Worker } from 'node:worker_threads';
import { ctlBuffer, wordLoad } from '../lib/shm/ctl-load.js';
import { SharedState } from '../lib/shm/shared-state.js';

t.test('the load reads what Atomics stores, at every word', async (t) => {
  const { buffer, memory } = ctlBuffer(100_000);
  t.ok(memory !== null, 'WebAssembly is there: a shared memory');
  t.ok(buffer.byteLength >= 400_000, 'holding every word');
  const ctl = new Int32Array(buffer);
  const load = wordLoad(memory, ctl);
  for (const w of [0, 1, 31, 32, 65_535, 99_999]) {
    Atomics.store(ctl, w, w * 7 - 3);
    t.equal(load(w), w * 7 - 3, `word ${w}`);
  }
  Atomics.store(ctl, 5, -1);
  t.equal(load(5), -1, 'a negative word');
});

t.test('another thread, posted the memory, loads what this one stores', async (t) => {
  const sh = SharedState.create({ executors: 1, pes: 4, hosts: 1, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 1024 });
  t.ok(sh.buffers.ctlMemory !== null);
  Atomics.store(sh.ctl, 40, 12345);
  const url = new URL('../lib/shm/ctl-load.js', import.meta.url).href;
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(${JSON.stringify(url)}).then(({ wordLoad }) => {
       const load = wordLoad(workerData.memory, new Int32Array(workerData.buffer));
       const first = load(40);
       Atomics.store(new Int32Array(workerData.buffer), 41, 777);
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
});

t.test('without a memory the load is Atomics.load on the array', async (t) => {
  const ctl = new Int32Array(new SharedArrayBuffer(64));
  const load = wordLoad(null, ctl);
  Atomics.store(ctl, 3, 99);
  t.equal(load(3), 99);
});

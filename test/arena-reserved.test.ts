// Runs on: main thread (tap). Covers: a session's arena (lib/shm/shared-state.ts) is
// reserved, not committed: a SharedArrayBuffer growable to its own size, so that a
// process of many sessions, each with a 1 GiB arena mostly untouched, can still fork a
// child (decision 0268). Its size and contents behave as a plain buffer's.
import t from 'tap';
import { SharedState } from '../lib/shm/shared-state.js';
import { Worker } from 'node:worker_threads';

const dims = { executors: 1, pes: 4, hosts: 2, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 1 << 30, links: 0 };

t.test('the arena is growable to exactly its size, so the kernel reserves it instead of counting it committed', async (t) => {
  const sh = SharedState.create(dims);
  const arena = sh.buffers.arena;
  t.ok(arena.growable, 'growable');
  t.equal(arena.byteLength, 1 << 30);
  t.equal(arena.maxByteLength, 1 << 30, 'it can never grow past its size');
  t.equal(sh.arena.length, 1 << 30, 'the view covers the whole arena');
});

t.test('another thread sees what one wrote into it, as in a plain shared buffer', async (t) => {
  const sh = SharedState.create({ ...dims, arenaBytes: 1 << 20 });
  new Float32Array(sh.buffers.arena, 4096, 4).set([1, 2, 3, 4]);
  const w = new Worker('const { parentPort, workerData } = require("node:worker_threads"); parentPort.postMessage(Array.from(new Float32Array(workerData, 4096, 4)));', { eval: true, workerData: sh.buffers.arena });
  const got = await new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await w.terminate();
  t.same(got, [1, 2, 3, 4]);
});

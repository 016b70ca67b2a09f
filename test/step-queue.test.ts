// Runs on: main thread (tap), sessions on real threads. Covers: the order in which a
// thread's yielded ring steps take their turns (lib/sync/step-queue.ts, decision
// 0261): lowest quantum of virtual time first, then lowest PE, one step a job; and
// which threads use it (stepQuantumPs). What it buys is counted in
// test/link-pieces.test.ts (a torus on one thread) and docs/benchmarks.md.
import t from 'tap';
import { OwnedContinuation } from '../lib/sync/fault-owner.js';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { StepQueue, stepQuantumPs } from '../lib/sync/step-queue.js';
import type { ThreadEnv } from '../lib/sync/thread-env.js';
import { latencyPs } from '../lib/time/virtual-time.js';
import { Machine } from '../lib/topology/machine.js';

/** A step that logs its name when it runs. */
const logged = (log: string[], name: string): OwnedContinuation =>
  new OwnedContinuation(
    () => log.push(name),
    () => {},
  );

/** Until every job queued so far, and those they queue, has run. */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

t.test('steps run lowest quantum first, then lowest PE, whatever the order they came in', async (t) => {
  const q = new StepQueue();
  const log: string[] = [];
  const steps: [number, number][] = [
    [12, 5],
    [10, 7],
    [11, 1],
    [10, 2],
    [12, 0],
    [10, 9],
  ];
  for (const [quantum, pe] of steps) q.push(logged(log, `${quantum}/${pe}`), quantum, pe);
  await settle();
  t.same(log, ['10/2', '10/7', '10/9', '11/1', '12/0', '12/5']);
  t.equal(q.length, 0);
});

t.test('a step of a lower quantum than any waiting goes first; one far ahead waits with the last kept quantum', async (t) => {
  const q = new StepQueue();
  const log: string[] = [];
  q.push(logged(log, 'a'), 20, 3);
  q.push(logged(log, 'b'), 21, 0);
  q.push(logged(log, 'c'), 19, 8); // below the lowest: the queue's lowest quantum moves down to it
  q.push(logged(log, 'far'), 1000, 1); // 8 quanta and more ahead: kept with quantum 19 + 7, by PE
  q.push(logged(log, 'd'), 26, 2);
  await settle();
  t.same(log, ['c', 'a', 'b', 'far', 'd']);
});

t.test('one step a job: the thread\'s other jobs run between two steps', async (t) => {
  const q = new StepQueue();
  const log: string[] = [];
  q.push(logged(log, 'step 1'), 0, 0);
  q.push(logged(log, 'step 2'), 0, 1);
  void Promise.resolve().then(() => log.push('other job'));
  await settle();
  t.same(log, ['step 1', 'other job', 'step 2']);
});

t.test('which threads order their steps: several PEs with other threads running some, or links proved alone off a ring', async (t) => {
  const ring = new Machine(loadTopology(topologyPath('ideal'), ['system.sips.count=16']));
  const torus = new Machine(loadTopology(topologyPath('ideal_torus_2d_2x3'), ['system.sips.count=16', 'system.sips.w=4', 'system.sips.h=4']));
  const env = (machine: Machine, turnsFirst: boolean, links: 'none' | 'claimed'): ThreadEnv => ({ machine, sched: { turnsFirst }, plan: { links }, linksClaimed: links === 'claimed' }) as unknown as ThreadEnv;
  const alpha = latencyPs(1000); // both files' link latency (1 us)
  t.equal(stepQuantumPs(env(ring, false, 'claimed')), 0, 'one thread over a ring: in the order they yielded');
  t.equal(stepQuantumPs(env(ring, true, 'claimed')), alpha, 'a thread beside others: ordered, in quanta of the link latency');
  t.equal(stepQuantumPs(env(torus, false, 'claimed')), alpha, 'one thread over a torus, links proved alone: ordered');
  t.equal(stepQuantumPs(env(torus, false, 'none')), 0, 'links not shared: no proof to wait for');
});

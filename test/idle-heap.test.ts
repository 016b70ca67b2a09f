// Runs on: main thread (tap). Covers: decision 0225, main gives back its young
// generation while it waits for a large spawn's ranks. Counts the bytes of main's
// young generation (V8's heap space statistics), not the process's RSS: grown as
// main's start-up grows it, it must be back near its minimum once main has waited
// for RELEASE_FROM_RANKS ranks, and a small spawn asks for no collection.
import t from 'tap';
import v8 from 'node:v8';
// A namespace import: lastIdleRelease is reassigned by each release, read live.
import * as idleHeap from '../lib/session/idle-heap.js';
import { TestRuntime } from './helpers/run.js';
import { IDLE_RANK, idleRank } from './fixtures/idle-rank.js';

const rt = new TestRuntime({ modules: [IDLE_RANK] });
t.teardown(() => rt.close());

const youngBytes = (): number => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0;

/** Grow main's young generation as start-up does: objects that survive a few scavenges, then die. */
function growYoung(): void {
  let keep: { i: number; s: string }[] = [];
  for (let i = 0; i < 1_500_000; i++) {
    keep.push({ i, s: `x${i}` });
    if (keep.length > 300_000) keep = [];
  }
}

const MiB = 1 << 20;
const over = { topology: 'ideal', threads: 1 as const, noData: true };

t.test('after main waits for a large spawn its young generation is back near its minimum', async (t) => {
  const r = await rt.session({ ...over, sets: [`system.sips.count=${idleHeap.RELEASE_FROM_RANKS}`] }, async (torch) => {
    growYoung();
    const grown = youngBytes();
    const ranks = await torch.multiprocessing.spawn(idleRank, { args: [], nprocs: idleHeap.RELEASE_FROM_RANKS });
    await idleHeap.lastIdleRelease;
    return { grown, after: youngBytes(), ranks: ranks.length };
  });
  t.equal(r.value.ranks, idleHeap.RELEASE_FROM_RANKS);
  t.ok(r.value.grown >= 8 * MiB, `main's young generation grew to ${(r.value.grown / MiB).toFixed(1)} MiB before the spawn`);
  t.ok(r.value.after <= 2 * MiB, `after the spawn it holds ${(r.value.after / MiB).toFixed(1)} MiB (was ${(r.value.grown / MiB).toFixed(1)})`);
});

t.test('a small spawn asks for no collection', async (t) => {
  const before = idleHeap.lastIdleRelease;
  await rt.session({ ...over, sets: ['system.sips.count=8'] }, (torch) => torch.multiprocessing.spawn(idleRank, { args: [], nprocs: 8 }));
  t.equal(idleHeap.lastIdleRelease, before, 'no collection was asked for');
});

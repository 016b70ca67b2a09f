// Runs on: main thread (tap), sessions on real threads. Covers: links as shared
// resources (topology timing.link_sharing: max_min; lib/coordinator/link-arbiter.ts,
// docs/decisions/0023-links-as-shared-resources.md): two flows that cross one
// link at once get half of it each, and two that enter it a latency apart do not
// meet, by a law worked out by hand below; the ring
// all-reduce, whose flows never meet, keeps the alpha-beta law exactly; and a run
// with shared links is the same under every thread layout and under jitter.
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [new URL("../benches/link_sharing.js", import.meta.url).href] });
t.teardown(() => rt.close());

const ideal = loadTopology(topologyPath('ideal'));
const alpha = ideal.timing.links.sip_sip.latency_ns;
const beta = ideal.timing.links.sip_sip.bandwidth_gb_s;
const SHARED = 'timing.link_sharing=max_min';
/** The whole message fits the IPCQ window on every tree edge (2 hops at most here), so credits never hold a piece back. */
const WINDOW = 'ccl.n_slots=128';

async function run(algorithm: string, sets: string[], bytes: number, over: { threads?: 1 | 2 | 'rank' | 'pe'; jitterSeed?: number } = {}) {
  const [r] = await rt.bench('ccl_allreduce', { algorithm, topology: 'ideal', dtype: 'f32', threads: over.threads ?? 1, jitterSeed: over.jitterSeed ?? null, sets: [...sets, WINDOW, `ccl.n_elem=${bytes / 4}`] });
  if (!r.ok) throw new Error(r.lines.join(' | '));
  return r;
}

t.test('a 4-rank tree all-reduce on the ideal ring: the leaves\' two flows share a link, 5 S/beta + 6 alpha against 4 S/beta + 6 alpha', async (t) => {
  // S/beta = 655.36 ns < alpha = 1000 ns here. Heap tree 0 <- {1, 2}, 1 <- {3}; routes on
  // the 4-ring, ties to the east. A flow pays its route's latency, then shares its links
  // until its last byte arrives (CM02's order).
  //   2 -> 0 over links 2E, 3E and 3 -> 1 over 3E, 0E: both start at 0 and enter 3E at
  //   2 alpha, each gets beta/2: both arrive at 2 alpha + 2S/beta.
  //   1 -> 0 (one hop, alone): arrives at 3 alpha + 3S/beta, when the root has both.
  //   0 -> 1 over 0E and 0 -> 2 over 0E, 1E: they enter 0E alpha apart, and the first is
  //   gone after S/beta < alpha, so neither is slowed: rank 1 has it at 4 alpha + 4S/beta,
  //   sends 1 -> 3 over 1E, 2E alone: 6 alpha + 5S/beta.
  // Unshared, the leaves' step takes S/beta too: 6 alpha + 4S/beta.
  const S = 65536;
  t.ok(S / beta < alpha, 'the case this law is for');
  const sets = ['system.sips.count=4'];
  const shared = await run('tree_allreduce', [...sets, SHARED], S);
  const alone = await run('tree_allreduce', [...sets, 'timing.link_sharing=none'], S);
  const law = (k: number): number => (k * S) / beta + 6 * alpha;
  t.ok(Math.abs(shared.critNs - law(5)) <= 0.002, `shared: crit ${shared.critNs} ns vs ${law(5)} ns`);
  t.ok(Math.abs(alone.critNs - law(4)) <= 0.002, `not shared: crit ${alone.critNs} ns vs ${law(4)} ns`);
});

for (const [p, N] of [
  [5, 81920], // N/p = 16 KiB: equal chunks
  [8, 1048576],
]) {
  t.test(`ring all-reduce, p = ${p}, N = ${N} B with shared links: still 2(p-1)(alpha + N/(p beta)), to 1e-6`, async (t) => {
    const r = await run('ring_allreduce', [`system.sips.count=${p}`, SHARED], N);
    const law = 2 * (p - 1) * (alpha + N / (p * beta));
    t.ok(Math.abs(r.critNs - law) / law <= 1e-6, `crit ${r.critNs} ns vs law ${law} ns`);
  });
}

t.test('a tree all-reduce with shared links gives the same digest and crit under every thread layout and under jitter', async (t) => {
  const sets = ['system.sips.count=6', SHARED];
  const S = 16384;
  const base = await run('tree_allreduce', sets, S);
  for (const over of [{ threads: 'rank' as const }, { threads: 2 as const }, { threads: 'pe' as const }, { threads: 2 as const, jitterSeed: 7 }]) {
    const r = await run('tree_allreduce', sets, S, over);
    t.equal(r.digest, base.digest, `digest, ${JSON.stringify(over)}`);
    t.equal(r.critNs, base.critNs, `crit, ${JSON.stringify(over)}`);
  }
});

t.test('the link_sharing bench runs both ways and reports the virtual times: equal for the ring, larger shared for the tree', async (t) => {
  const [ring, tree] = await rt.bench('link_sharing', { options: { ranks: '4', bytes: '16384', reps: '1', rounds: '1' } });
  t.equal(ring.extra?.crit_ns_shared, ring.extra?.crit_ns_unshared, 'the ring: no two flows meet');
  t.ok(Number(tree.extra?.crit_ns_shared) > Number(tree.extra?.crit_ns_unshared), `the tree: ${tree.extra?.crit_ns_shared} > ${tree.extra?.crit_ns_unshared} ns`);
  t.ok(Number(ring.extra?.shared_over_unshared) > 0, 'a wall-time ratio');
});

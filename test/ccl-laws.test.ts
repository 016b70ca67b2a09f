// The alpha-beta laws of the 2-D, line and tree all-reduces
// (docs/algorithms/mesh_allreduce.md, tree_allreduce.md) on ideal topologies:
// one link class, zero overheads, f32, and n divisible by every chunk count so
// chunks are equal. The IPCQ window is the ideal topologies' own (their `ccl:`
// section), which covers the bandwidth-delay product so credits never throttle
// (docs/timing.md, "The credit window"): no test widens it.
// Each step's cost is rounded to 1 ps once, so crit_ns is within 2 ps per step.
// The ring and the 2-D torus also hold to a relative error of 1e-6 beyond 1 KiB
// per rank and chunk (issue 14, item 5: the shared default window of 4 x 1 KiB
// made them up to 45x slower there).
// Also broadcast, allGather and reduceScatter on an ideal 6-ring
// (docs/algorithms/broadcast.md, all_gather.md, reduce_scatter.md).
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { CCL_FIXTURES, collectiveWorker, type CollectiveCase, everyRank } from './fixtures/ccl.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());

const ideal = loadTopology(topologyPath('ideal_torus_2d_2x3'));
const alpha = ideal.timing.links.sip_sip.latency_ns;
const beta = ideal.timing.links.sip_sip.bandwidth_gb_s;
/** Bytes per rank: n = 96 and 6144 f32 elements (both divisible by 2 x 3). */
const SIZES = [96 * 4, 6144 * 4];

/** 2(w-1)(a + N/(w b)) + 2(h-1)(a + N/(w h b)). */
const torusLaw = (w: number, h: number, N: number): number => 2 * (w - 1) * (alpha + N / (w * beta)) + 2 * (h - 1) * (alpha + N / (w * h * beta));
/** One line of p ranks: a 2-rank ring for p = 2, else reduce to the end and broadcast back in p pieces. */
const lineLaw = (p: number, N: number): number => (p <= 2 ? 2 * (p - 1) * (alpha + N / (p * beta)) : 2 * ((p - 1) * alpha + ((2 * p - 2) * N) / (p * beta)));

async function crit(algorithm: string, sets: string[], bytes: number): Promise<number> {
  const [r] = await rt.bench('ccl_allreduce', { algorithm, topology: 'ideal_torus_2d_2x3', dtype: 'f32', threads: 1, sets: [...sets, `ccl.n_elem=${bytes / 4}`] });
  if (!r.ok) throw new Error(r.lines.join(' | '));
  return r.critNs;
}

for (const [w, h] of [
  [2, 3],
  [3, 2],
]) {
  for (const N of SIZES) {
    t.test(`torus ${w}x${h}, N=${N} B: mesh_allreduce takes 2(w-1)(alpha + N/(w beta)) + 2(h-1)(alpha + N/(w h beta))`, async (t) => {
      const got = await crit('mesh_allreduce', [`system.sips.w=${w}`, `system.sips.h=${h}`], N);
      const steps = 2 * (w - 1) + 2 * (h - 1);
      const law = torusLaw(w, h, N);
      t.ok(Math.abs(got - law) <= (2 * steps) / 1000, `crit ${got} ns vs law ${law} ns`);
    });
    t.test(`mesh ${w}x${h} without wrap, N=${N} B: mesh_allreduce_no_wrap takes line(w) + line(h)`, async (t) => {
      const got = await crit('mesh_allreduce_no_wrap', ['system.sips.topology=mesh_2d_no_wrap', `system.sips.w=${w}`, `system.sips.h=${h}`], N);
      const steps = 2 * (w - 1) + 2 * (h - 1) + 2 * Math.max(w, h);
      const law = lineLaw(w, N) + lineLaw(h, N);
      t.ok(Math.abs(got - law) <= (2 * steps) / 1000, `crit ${got} ns vs law ${law} ns`);
    });
  }
}

/** Bytes per chunk (N/p) beyond the old 1 KiB limit. */
const CHUNKS = [4096, 65536];
const REL = 1e-6;

for (const chunk of CHUNKS) {
  t.test(`ideal 8-ring, N/p = ${chunk} B, the topology's own IPCQ settings: ring_allreduce takes 2(p-1)(alpha + N/(p beta)) to 1e-6`, async (t) => {
    const ideal8 = loadTopology(topologyPath('ideal'));
    const p = ideal8.system.sips.count;
    const a = ideal8.timing.links.sip_sip.latency_ns;
    const b = ideal8.timing.links.sip_sip.bandwidth_gb_s;
    const [r] = await rt.bench('ccl_allreduce', { topology: 'ideal', dtype: 'f32', threads: 1, sets: [`ccl.n_elem=${(chunk * p) / 4}`] });
    t.ok(r.ok, r.lines.join(' | '));
    const law = 2 * (p - 1) * (a + (chunk * p) / (p * b));
    t.ok(Math.abs(r.critNs - law) / law <= REL, `crit ${r.critNs} ns vs law ${law} ns`);
  });
  t.test(`ideal 2x3 torus, N/p = ${chunk} B, the topology's own IPCQ settings: mesh_allreduce takes the torus law to 1e-6`, async (t) => {
    const N = chunk * 6;
    const got = await crit('mesh_allreduce', [], N);
    const law = torusLaw(2, 3, N);
    t.ok(Math.abs(got - law) / law <= REL, `crit ${got} ns vs law ${law} ns`);
  });
}

t.test('on the ideal 2x3 grid the torus all-reduce beats the line-based one without wrap (same alpha terms, fewer bytes on the 3-rank dimension)', async (t) => {
  const N = SIZES[1];
  const torus = await crit('mesh_allreduce', [], N);
  const mesh = await crit('mesh_allreduce_no_wrap', ['system.sips.topology=mesh_2d_no_wrap'], N);
  t.ok(torus < mesh, `torus ${torus} ns < mesh ${mesh} ns`);
});

for (const N of SIZES) {
  t.test(`6 ranks on an ideal 6-ring, N=${N} B, links not shared: tree_allreduce takes 2 x the slowest root-to-leaf path, 10 alpha + 4 N/beta`, async (t) => {
    // Heap tree 0-{1,2}, 1-{3,4}, 2-{5} on the ring 0..5: edge hops 0-1: 1, 0-2: 2,
    // 1-3: 2, 1-4: 3, 2-5: 3. Slowest path up: 5 -> 2 -> 0 = 5 alpha + 2 N/beta; down the same.
    // The law of the algorithm's steps alone: its flows meet on links (3 -> 1 and 4 -> 1 both
    // end on 2W), so with links shared (the default) it is slower (test/link-sharing.test.ts).
    const [r] = await rt.bench('ccl_allreduce', { algorithm: 'tree_allreduce', topology: 'ideal_ring_1d_6', dtype: 'f32', threads: 1, sets: [`ccl.n_elem=${N / 4}`, 'timing.link_sharing=none'] });
    t.ok(r.ok, r.lines.join(' | '));
    const law = 10 * alpha + (4 * N) / beta;
    t.ok(Math.abs(r.critNs - law) <= 8 / 1000, `crit ${r.critNs} ns vs law ${law} ns`);
  });
}

const P = 6;
const collectiveLaws: { kind: CollectiveCase['kind']; law: string; bytes: (n: number) => number; time: (N: number) => number }[] = [
  { kind: 'broadcast', law: '(p-1) alpha + (2p-2) N/(p beta)', bytes: (n) => 4 * n, time: (N) => (P - 1) * alpha + ((2 * P - 2) * N) / (P * beta) },
  { kind: 'allGather', law: '(p-1)(alpha + N/beta), N = input bytes', bytes: (n) => 4 * n, time: (N) => (P - 1) * (alpha + N / beta) },
  { kind: 'reduceScatter', law: '(p-1)(alpha + N/(p beta)), N = input bytes', bytes: (n) => 4 * P * n, time: (N) => (P - 1) * (alpha + N / (P * beta)) },
];
for (const c of collectiveLaws) {
  t.test(`${c.kind} of n = 6144 f32 on an ideal 6-ring takes ${c.law}`, async (t) => {
    const n = 6144;
    const r = await rt.session({ topology: 'ideal_ring_1d_6', threads: 1 }, (torch) =>
      torch.multiprocessing.spawn(collectiveWorker, { args: [{ kind: c.kind, nElem: n, dtype: 'f32', src: 0 }], nprocs: P }),
    );
    const got = Math.max(...everyRank(r.value).map((v) => v.critNs));
    const law = c.time(c.bytes(n));
    t.ok(Math.abs(got - law) <= (2 * 2 * P) / 1000, `crit ${got} ns vs law ${law} ns`);
  });
}

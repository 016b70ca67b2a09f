// Runs on: main thread (tap), sessions on real threads. Covers: the shipped collectives
// whose kernels send east only declare it (decision 0188): broadcast, allGather,
// reduceScatter and the ring allToAllSingle (by default, and as the ring_alltoall module).
// On the default machine's ring of two SIPs east and west are the one link to the other
// SIP; declared east only, a kernel's claim of that link is its east channel's alone, so
// most of its pieces go alone at once, on the send, instead of being held for a release
// pass (decision 0187). The times must be the link arbiter's all the same. The subgroup
// barrier and the transformer layer's fused collective-matmul kernels declare east too.
import t from 'tap';
import { CCL_FIXTURES, collectiveWorker, lateBarrierWorker, type CollectiveCase } from './fixtures/ccl.js';
import { TestRuntime } from './helpers/run.js';
import { layerWorker, presetConfig } from '../benches/transformer_layer.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());

const CLAIMED = ['timing.link_sharing=max_min'];
const ARBITRATED = ['timing.link_sharing=max_min', 'timing.link_fast_path=false'];

/** Each collective, with the --set that picks its kernel (none: the default). */
const CASES: { what: string; c: CollectiveCase; sets: string[] }[] = [
  { what: 'broadcast', c: { kind: 'broadcast', nElem: 4096, dtype: 'f32', src: 1 }, sets: [] },
  { what: 'allGather', c: { kind: 'allGather', nElem: 2048, dtype: 'f32' }, sets: [] },
  { what: 'reduceScatter', c: { kind: 'reduceScatter', nElem: 2048, dtype: 'f32', op: 'sum' }, sets: [] },
  { what: 'allToAllSingle (the ring)', c: { kind: 'allToAllSingle', nElem: 2048, dtype: 'f32' }, sets: [] },
  { what: 'allToAllSingle (module ring_alltoall)', c: { kind: 'allToAllSingle', nElem: 2048, dtype: 'f32' }, sets: ['ccl.collectives.all_to_all.module=ring_alltoall'] },
];

for (const { what, c, sets } of CASES) {
  t.test(`${what} on the default machine's two ranks: most pieces alone at once, with the arbitrated values and crit_ns`, async (t) => {
    const go = async (threads: 1 | 'rank', links: string[]) => {
      const run = await rt.session({ topology: 'default', threads, sets: [...links, ...sets] }, (torch) => torch.multiprocessing.spawn(collectiveWorker, { args: [c], nprocs: 2 }));
      return { views: run.value, pieces: run.report.linkPieces, messages: run.report.messages };
    };
    const ref = await go(1, ARBITRATED);
    t.equal(ref.pieces.arbitrated, ref.messages, `arbitrated from the start: every piece through the arbiter (${ref.messages})`);
    for (const threads of [1, 'rank'] as const) {
      const r = await go(threads, CLAIMED);
      t.same(r.views, ref.views, `--threads ${threads}: the arbitrated values and crit_ns (${JSON.stringify(ref.views.map((v) => v?.critNs))} ns)`);
      const { alone, released, arbitrated } = r.pieces;
      t.ok(alone * 2 > r.messages, `--threads ${threads}: most pieces alone at once, on the send (${alone} of ${r.messages}; ${released} held then alone, ${arbitrated} arbitrated)`);
    }
  });
}

// A subgroup of the whole world is the host barrier, so the barrier kernel needs more SIPs: ranks 0 and 1 of four,
// neighbours on the ring, where east and west of each are again the one link to the other. It declares east too,
// but its one-element pieces leave at its launch, before the launch horizon has passed their end, so the reach of
// the link holds them all, declared or not (decision 0170): checked here is that the declaration is the kernel's
// direction (a wrong one fails the spawn with ERR_SEND_UNDECLARED) and keeps the arbitrated times.
t.test('a barrier of ranks 0 and 1 of four on the default ring, declared east: the arbitrated host clocks, no piece through the arbiter', async (t) => {
  const go = async (threads: 1 | 'rank', links: string[]) => {
    const run = await rt.session({ topology: 'default', threads, sets: [...links, 'system.sips.count=4'] }, (torch) => torch.multiprocessing.spawn(lateBarrierWorker, { args: [[0, 1], -1, 0], nprocs: 4 }));
    return { clocks: run.value, pieces: run.report.linkPieces, messages: run.report.messages };
  };
  const ref = await go(1, ARBITRATED);
  t.equal(ref.pieces.arbitrated, ref.messages, `arbitrated from the start: every piece through the arbiter (${ref.messages})`);
  for (const threads of [1, 'rank'] as const) {
    const r = await go(threads, CLAIMED);
    t.same(r.clocks, ref.clocks, `--threads ${threads}: the arbitrated host clocks after the barrier (${JSON.stringify(ref.clocks)} ns)`);
    t.equal(r.pieces.alone + r.pieces.released, r.messages, `--threads ${threads}: every piece timed alone (${r.pieces.alone} at once, ${r.pieces.released} held then alone, of ${r.messages})`);
  }
});

const layers = new TestRuntime({ modules: [new URL('../benches/transformer_layer.js', import.meta.url).href] });
t.teardown(() => layers.close());

// The fused kernels send at once and then multiply, so their kernel is not quiet while its piece flies: undeclared,
// the pieces its two channels claim together wait for the arbiter (4 of 8 here); declared, the east channel's own.
t.test('the overlapped layer at TP = 2 on the default machine: no piece through the arbiter, with the arbitrated rows and spans', async (t) => {
  const config = presetConfig('tiny', 1, 'f16', 'tp+sp+overlap');
  const go = async (threads: 1 | 'rank', links: string[]) => {
    const run = await layers.session({ topology: 'default', threads, sets: [...links, 'sip.cube_mesh.w=1', 'sip.cube_mesh.h=1'] }, (torch) => torch.multiprocessing.spawn(layerWorker, { args: [config, false], nprocs: 2 }));
    return { ranks: run.value.map((r) => ({ y: Array.from(r.y), spans: r.spans })), pieces: run.report.linkPieces, messages: run.report.messages };
  };
  const ref = await go(1, ARBITRATED);
  t.equal(ref.pieces.arbitrated, ref.messages, `arbitrated from the start: every piece through the arbiter (${ref.messages})`);
  for (const threads of [1, 'rank'] as const) {
    const r = await go(threads, CLAIMED);
    t.same(r.ranks, ref.ranks, `--threads ${threads}: the arbitrated rows and spans`);
    const { alone, released, arbitrated } = r.pieces;
    t.equal(arbitrated, 0, `--threads ${threads}: none through the arbiter (${alone} alone at once, ${released} held then alone, of ${r.messages})`);
  }
});

// The transformer layer's overlap option (issue 25 item 3): the fused
// collective-matmul kernels (lib/tp/collective-matmul.ts) give bit for bit the
// sequence-parallel layer's output, their reported wait is the exposed
// communication of the breakdown, and overlap without sequence parallelism is
// refused. Determinism under every layout and jitter:
// test/tp-layer-determinism.test.ts.
import t from 'tap';
import { presetConfig } from '../benches/transformer_layer.js';
import { breakdown } from '../lib/tp/timeline.js';
import { layerConfig } from '../lib/tp/transformer-layer.js';
import { layerRuntime } from './helpers/layer-run.js';

const { rt, runLayer } = layerRuntime();
t.teardown(() => rt.close());

const ONE_PE = ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1'];

// Bit for bit: each block of rows is one tl.dot over the full K rounded once (as the gemm),
// and the ring adds the partial sums in the ring reduce-scatter's order.
for (const [preset, dtype, sips] of [['tiny', 'f16', 2], ['tiny-gqa', 'bf16', 2], ['tiny', 'f32', 4]] as const) {
  t.test(`the overlapped ${preset} layer in ${dtype} at TP = ${sips} gives every rank bit for bit the sequence-parallel layer's rows`, async (t) => {
    const sets = [...ONE_PE, `system.sips.count=${sips}`];
    const sp = await runLayer(presetConfig(preset, 1, dtype, 'tp+sp'), { sets });
    const ov = await runLayer(presetConfig(preset, 1, dtype, 'tp+sp+overlap'), { sets });
    t.equal(ov.length, sips);
    t.ok(sp[0].y.length > 0);
    for (const r of ov) t.same(Array.from(r.y), Array.from(sp[r.rank].y), `rank ${r.rank}`);
  });
}

t.test('the fused kernels report their wait on communication, and the breakdown counts it as the exposed communication', async (t) => {
  const sets = [...ONE_PE, 'system.sips.count=4'];
  const ranks = await runLayer(presetConfig('tiny', 1, 'f16', 'tp+sp+overlap'), { sets, noData: true });
  for (const r of ranks) {
    const fused = r.spans.filter((s) => s.kind === 'overlapped');
    t.same(fused.map((s) => `${s.block} ${s.name}`), ['attention all_gather_gemm', 'attention gemm_reduce_scatter', 'mlp all_gather_gemm', 'mlp gemm_reduce_scatter']);
    // Each waited (a ring step cannot receive before its neighbour sent), and less than its whole span (it multiplied).
    for (const s of fused) t.ok(s.waitPs > 0 && s.waitPs < s.endPs - s.startPs, `${s.name} waited ${s.waitPs} ps of ${s.endPs - s.startPs}`);
    const b = breakdown(r.spans);
    t.equal(b.exposedCommNs, fused.reduce((a, s) => a + s.waitPs, 0) / 1000, `rank ${r.rank}: no plain collective is left, so the waits are all the exposed communication`);
    t.ok(b.exposedCommNs < b.commNs, 'some communication is hidden');
  }
});

t.test('overlap without sequence parallelism is refused with its own code', async (t) => {
  t.throws(() => layerConfig({ hiddenSize: 64, numAttentionHeads: 8, seqLength: 4, overlap: true }), { code: 'ERR_OVERLAP_NEEDS_SEQUENCE_PARALLEL' });
  t.doesNotThrow(() => layerConfig({ hiddenSize: 64, numAttentionHeads: 8, seqLength: 4, overlap: true, sequenceParallel: true }));
});

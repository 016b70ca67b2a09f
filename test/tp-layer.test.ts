// The Megatron transformer layer (issue 25): every preset with data checked
// against the single-device JS reference in f32, f16 and bf16; sequence
// parallelism gives tensor parallelism's numbers; the FLOP count is the
// published formula; the time breakdown's interval arithmetic. Determinism:
// test/tp-layer-determinism.test.ts.
import t from 'tap';
import { presetConfig, checkRank, TOLERANCE_ULPS } from '../benches/transformer_layer.js';
import { layerInput, layerParameters, layerReference } from '../lib/tp/layer-reference.js';
import { unitRoundoff } from '../lib/tp/reference.js';
import { breakdown, type Span } from '../lib/tp/timeline.js';
import { layerConfig, type TransformerLayerConfig } from '../lib/tp/transformer-layer.js';
import { layerRuntime } from './helpers/layer-run.js';

const { rt, runLayer } = layerRuntime();
t.teardown(() => rt.close());

// ---- numbers ---------------------------------------------------------------------------

for (const preset of ['tiny', 'tiny-gqa'] as const) {
  for (const dtype of ['f32', 'f16', 'bf16'] as const) {
    t.test(`the ${preset} layer in ${dtype} matches the single-device reference on both ranks, and changes x by far more than the tolerance`, async (t) => {
      const c = presetConfig(preset, 2, dtype, 'tp');
      const ranks = await runLayer(c);
      const x = layerInput(c, 52);
      const ref = layerReference(c, layerParameters(c, 53), x);
      t.same(ranks.map((r) => checkRank(c, ref, r, c.seqLength * 2).wrong), [0, 0]);
      // Not a vacuous check: the layer moves x by more than ten times the tolerance at |ref| = 1.
      const moved = Math.max(...ref.map((v, i) => Math.abs(v - x[i])));
      t.ok(moved > 10 * TOLERANCE_ULPS * unitRoundoff(dtype) * 2, `the layer moved x by at most ${moved}`);
    });
  }
}

t.test('sequence parallelism gives each rank exactly its rows of the tensor-parallel output', async (t) => {
  for (const preset of ['tiny', 'tiny-gqa'] as const) {
    const tp = await runLayer(presetConfig(preset, 2, 'f16', 'tp'));
    const sp = await runLayer(presetConfig(preset, 2, 'f16', 'tp+sp'));
    const n = sp[0].y.length;
    t.equal(n * 2, tp[0].y.length);
    for (const r of sp) t.same(Array.from(r.y), Array.from(tp[r.rank].y.subarray(r.rank * n, (r.rank + 1) * n)), `${preset} rank ${r.rank}`);
  }
});

// ---- FLOPs and the breakdown ------------------------------------------------------------------

t.test('a GPT-3-style layer counts 24 b s h^2 + 4 b s^2 h FLOPs over its ranks, with and without sequence parallelism', async (t) => {
  const [b, s, h] = [2, 256, 512];
  const expected = 24 * b * s * h * h + 4 * b * s * s * h; // Narayanan et al. 2021, eq. (2) per layer, forward
  for (const sequenceParallel of [false, true]) {
    const c = layerConfig({ hiddenSize: h, numAttentionHeads: 8, seqLength: s, microBatchSize: b, sequenceParallel });
    const ranks = await runLayer(c, { noData: true });
    t.equal(ranks.reduce((a, r) => a + breakdown(r.spans).flops, 0), expected);
  }
});

t.test('exposed communication is the part of the collectives no kernel overlaps', async (t) => {
  const span = (name: string, kind: Span['kind'], startPs: number, endPs: number): Span => ({ block: 'b', name, kind, startPs, endPs, bytes: 0, flops: 0, waitPs: 0, pes: 1 });
  const b = breakdown([span('g1', 'gemm', 0, 10_000), span('ar', 'collective', 5_000, 20_000), span('g2', 'gemm', 12_000, 15_000), span('ag', 'collective', 18_000, 25_000)]);
  // comm covers [5, 25) us-ish = 20 ns; compute covers [0, 10) and [12, 15): exposed = [10, 12) + [15, 25) = 12 ns.
  t.same({ compute: b.computeNs, comm: b.commNs, exposed: b.exposedCommNs, span: b.spanNs }, { compute: 13, comm: 20, exposed: 12, span: 25 });
});

t.test('without overlap every collective of the layer is exposed', async (t) => {
  const ranks = await runLayer(presetConfig('tiny', 1, 'f16', 'tp+sp'), { noData: true });
  const b = breakdown(ranks[0].spans);
  t.ok(b.commNs > 0);
  t.equal(b.exposedCommNs, b.commNs);
  t.same(b.collectives.map((k) => `${k.block} ${k.name} ${k.bytes}`), ['attention all_gather 2048', 'attention reduce_scatter 2048', 'mlp all_gather 2048', 'mlp reduce_scatter 2048']);
});

t.test("a SwiGLU layer with sequence parallelism all-gathers the MLP's input once, as Megatron's fused linear_fc1", async (t) => {
  const ranks = await runLayer(presetConfig('tiny-gqa', 1, 'f16', 'tp+sp'), { noData: true });
  t.same(breakdown(ranks[0].spans).collectives.map((k) => `${k.block} ${k.name}`), ['attention all_gather', 'attention reduce_scatter', 'mlp all_gather', 'mlp reduce_scatter']);
});

// ---- refusals -----------------------------------------------------------------------------

t.test('the layer refuses heads, or sequence-parallel rows, that do not split over the TP ranks with ERR_UNEVEN_SPLIT', async (t) => {
  const rankCodes = async (c: TransformerLayerConfig) => {
    const e = (await runLayer(c, { noData: true }).catch((x: unknown) => x)) as { code?: string; errors?: Map<number, { code?: string }> };
    return { code: e.code, ranks: [...(e.errors ?? new Map()).entries()].map(([r, x]) => [r, x.code]) };
  };
  const refused = { code: 'ERR_SPAWN', ranks: [[0, 'ERR_UNEVEN_SPLIT'], [1, 'ERR_UNEVEN_SPLIT']] };
  t.same(await rankCodes(layerConfig({ hiddenSize: 48, numAttentionHeads: 3, seqLength: 4 })), refused, 'three heads over two ranks');
  t.same(await rankCodes(layerConfig({ hiddenSize: 64, numAttentionHeads: 8, seqLength: 3, sequenceParallel: true })), refused, 's b = 3 rows over two ranks');
});

t.test('layerConfig refuses options that break a rule between fields, or an unknown option, with ERR_INVALID_OPTIONS', async (t) => {
  t.throws(() => layerConfig({ hiddenSize: 50, numAttentionHeads: 8, seqLength: 4 }), { code: 'ERR_INVALID_OPTIONS' }, 'hiddenSize not a multiple of the heads');
  t.throws(() => layerConfig({ hiddenSize: 64, numAttentionHeads: 8, numQueryGroups: 3, seqLength: 4 }), { code: 'ERR_INVALID_OPTIONS' }, 'heads not a multiple of the key/value groups');
  t.throws(() => layerConfig({ hiddenSize: 64, numAttentionHeads: 8, seqLength: 4, heads: 2 } as never), { code: 'ERR_INVALID_OPTIONS' }, 'an unknown key');
});

// ---- gpt3_qkv ---------------------------------------------------------------------------------

t.test('gpt3_qkv matches the JS matmul within 1 ulp on one SIP and over two SIPs, and TP is faster', async (t) => {
  const rs = await rt.bench('gpt3_qkv');
  t.same(rs.map((r) => [r.algorithm, r.worldSize, r.ok]), [['one_sip', 1, true], ['tp', 2, true]]);
  t.ok(rs[1].critNs < rs[0].critNs);
});

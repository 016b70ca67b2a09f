// The layer's GEMMs split over the PEs of the rank's cube (gemmPes, decision
// 0116): the same bits as the one-PE run and the reference's numbers with
// data, the same FLOP count, a shorter layer where the GEMMs dominate, one
// digest and crit_ns under every layout and jitter, and a refusal past the
// cube's PEs.
import t from 'tap';
import { presetConfig, checkRank, type LayerRankResult } from '../benches/transformer_layer.js';
import { layerInput, layerParameters, layerReference } from '../lib/tp/layer-reference.js';
import { cubePes, rowBlocks } from '../lib/tp/pe-split.js';
import { breakdown } from '../lib/tp/timeline.js';
import type { ShardDesc, TensorDesc } from '../lib/shm/tensor-desc.js';
import { layerConfig } from '../lib/tp/transformer-layer.js';
import { layerRuntime } from './helpers/layer-run.js';

const { rt, runLayer } = layerRuntime();
t.teardown(() => rt.close());

for (const variant of ['tp', 'tp+sp'] as const) {
  t.test(`${variant}: the f32 layer with its GEMMs over 4 PEs gives the one-PE run's bits, within the reference's tolerance, each GEMM on 4 PEs`, async (t) => {
    const one = await runLayer(presetConfig('tiny', 2, 'f32', variant));
    const four = await runLayer(presetConfig('tiny', 2, 'f32', variant, 4));
    const c = presetConfig('tiny', 2, 'f32', variant, 4);
    const ref = layerReference(c, layerParameters(c, 53), layerInput(c, 52));
    const rows = variant === 'tp' ? c.seqLength * 2 : c.seqLength;
    for (const r of four) {
      t.same(Array.from(r.y), Array.from(one[r.rank].y), `rank ${r.rank}: same bits`);
      t.equal(checkRank(c, ref, r, rows).wrong, 0, `rank ${r.rank}: within tolerance`);
      const gemms = r.spans.filter((s) => s.kind === 'gemm');
      t.equal(gemms.length, 4);
      t.same(gemms.map((s) => s.pes), [4, 4, 4, 4], 'every linear GEMM ran on 4 PEs');
      t.ok(r.spans.filter((s) => s.kind !== 'gemm').every((s) => s.pes === 1), 'every other kernel on one PE');
      t.ok(one[r.rank].spans.every((s) => s.pes === 1), 'the default runs everything on one PE');
    }
  });
}

t.test('with its GEMMs over 4 PEs a GPT-3-style layer still counts 24 b s h^2 + 4 b s^2 h FLOPs, and a GEMM-bound one ends sooner', async (t) => {
  const [b, s, h] = [2, 256, 512];
  const expected = 24 * b * s * h * h + 4 * b * s * s * h; // Narayanan et al. 2021, eq. (2) per layer, forward
  const shape = { hiddenSize: h, numAttentionHeads: 8, seqLength: s, microBatchSize: b };
  const one = await runLayer(layerConfig(shape), { noData: true });
  const four = await runLayer(layerConfig({ ...shape, gemmPes: 4 }), { noData: true });
  t.equal(four.reduce((a, r) => a + breakdown(r.spans).flops, 0), expected);
  const crit = (rs: LayerRankResult[]) => Math.max(...rs.map((r) => r.forwardNs));
  const gemmNs = (rs: LayerRankResult[]) => breakdown(rs[0].spans).blocks.reduce((a, k) => a + k.gemmNs, 0);
  t.ok(gemmNs(one) > crit(one) / 2, `the one-PE layer is GEMM-bound (GEMMs ${gemmNs(one)} of ${crit(one)} ns)`);
  t.ok(crit(four) < crit(one), `crit_ns ${crit(four)} over 4 PEs, ${crit(one)} on one`);
  // Each PE reads the whole weight from the one HBM channel, so less than 4x, but more than 2x on this shape.
  t.ok(gemmNs(four) < gemmNs(one) / 2, `GEMM time ${gemmNs(four)} over 4 PEs, ${gemmNs(one)} on one`);
});

t.test('the transformer_layer bench with --gemm-pes 4 gives the same digests and crit_ns under --threads 1, rank, pe and under jitter', async (t) => {
  const sets = ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1']; // one cube of 4 PEs per rank: 8 threads under --threads pe
  const options = { preset: 'tiny', variant: 'tp+sp', gemmPes: 4 };
  const key = (rs: { algorithm: string; digest: string; critNs: number }[]) => rs.map((r) => `${r.algorithm} ${r.digest} ${r.critNs}`);
  const ref = key(await rt.bench('transformer_layer', { threads: 1, sets, options }));
  for (const v of [{ threads: 'rank' as const, jitterSeed: null }, { threads: 'pe' as const, jitterSeed: null }, { threads: 1 as const, jitterSeed: 7 }]) {
    t.same(key(await rt.bench('transformer_layer', { ...v, sets, options })), ref, `${v.threads}/${v.jitterSeed}`);
  }
});

t.test('a layer whose GEMMs would split over more PEs than its cube has is refused with ERR_GEMM_PES_BEYOND_CUBE', async (t) => {
  const c = layerConfig({ hiddenSize: 64, numAttentionHeads: 8, seqLength: 16, gemmPes: 5 });
  const e = (await runLayer(c, { noData: true }).catch((x: unknown) => x)) as { errors?: Map<number, { code?: string }> };
  t.same([...(e.errors ?? new Map()).entries()].map(([r, x]) => [r, x.code]), [[0, 'ERR_GEMM_PES_BEYOND_CUBE'], [1, 'ERR_GEMM_PES_BEYOND_CUBE']]);
});

t.test('the row blocks of a split GEMM are disjoint: --check-races finds no race in the split layer', async (t) => {
  const rs = await rt.bench('transformer_layer', { checkRaces: true, options: { variant: 'tp+sp', dtype: 'f32', gemmPes: 4 } });
  t.same(rs.map((r) => r.ok), [true]);
});

t.test('row blocks are contiguous byte ranges that tile the shard, and only one shard in hbm or sram can be split', async (t) => {
  const shard: ShardDesc = { sip: 1, cube: 2, pe: 1, space: 'hbm', arenaOffset: 1000, deviceOffset: 64, nbytes: 10 * 3 * 2, rows: [0, 10], cols: [0, 3] };
  const x: TensorDesc = { kind: 'tensor', name: 'x', dtype: 'f16', shape: [10, 3], shards: [shard] };
  const { pes } = cubePes(x, 4, 4);
  t.same(pes, [1, 2, 3, 0], 'starting at the owner, within the cube');
  const v = rowBlocks(x, pes);
  t.same(v.shards.map((s) => [s.pe, s.rows, s.arenaOffset, s.deviceOffset, s.nbytes]), [[1, [0, 2], 1000, 64, 12], [2, [2, 3], 1012, 76, 18], [3, [5, 2], 1030, 94, 12], [0, [7, 3], 1042, 106, 18]]);
  t.ok(v.shards.every((s) => s.sip === 1 && s.cube === 2 && s.space === 'hbm'), 'the same cube and memory');
  const code = (f: () => unknown) => { try { f(); } catch (e) { return (e as { code?: string }).code; } return 'none'; };
  t.equal(code(() => cubePes({ ...x, shards: [{ ...shard, space: 'tcm' }] }, 2, 4)), 'ERR_GEMM_SPLIT_PLACEMENT');
  t.equal(code(() => cubePes({ ...x, shards: [shard, { ...shard, pe: 2 }] }, 2, 4)), 'ERR_GEMM_SPLIT_PLACEMENT');
  t.equal(code(() => cubePes(x, 5, 4)), 'ERR_GEMM_PES_BEYOND_CUBE');
});

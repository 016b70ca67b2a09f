// Tensor parallelism (seed 001, ADR-0027; DESIGN §6): parallel state per rank,
// ColumnParallelLinear and RowParallelLinear checked numerically against plain
// JS matmuls, the tp_mlp bench on every rank, and the gemm kernel's
// determinism under every thread layout.
import t from 'tap';
import { DPPolicy } from '../lib/host/dp-policy.js';
import { ColumnParallelLinear, gemm, matmul, parallelState, rounded, seededValues, ulp } from '../lib/tp/index.js';
import { measureGemm } from '../benches/gemm_single_pe.js';
import { MLP_DIMS, compare, mlpParameters, mlpReference } from '../benches/tp_mlp.js';
import {
  TP_FIXTURES,
  columnForwardWorker,
  columnShapesWorker,
  indivisibleWorker,
  rowForwardWorker,
  tpLifecycleWorker,
  tpNoGroupWorker,
  tpSizeWorker,
  tpStateWorker,
  type Caught,
  type LinearCase,
} from './fixtures/tp.js';
import type { SpawnArgs, SpawnResult, SpawnTarget } from '../lib/host/torch.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [TP_FIXTURES] });
t.teardown(() => rt.close());

/** Run `worker` on every SIP of `topology` and return the ranks' results. */
async function spawnAll<F extends SpawnTarget>(worker: F, args: SpawnArgs<F>, over: { topology?: string; threads?: 1 | 'rank' | 'pe' } = {}): Promise<SpawnResult<F>[]> {
  const r = await rt.session(over, (torch) => torch.multiprocessing.spawn(worker, { args, nprocs: torch.spec.system.sips.count }));
  return r.value;
}

/** Small integers in [-3, 3]: every product and sum below is exact in f16, so results must match exactly. */
function smallInts(seed: number, n: number): number[] {
  return Array.from(seededValues(seed, n, 'f32', -3.5, 3.5), (v) => Math.round(v));
}

// ---- parallel state -----------------------------------------------------------

t.test('initializeModelParallel gives each rank its own TP rank and the world size as TP size', async (t) => {
  const got = await spawnAll(tpStateWorker, []);
  t.same(got, [0, 1].map((rank) => ({ rank, before: false, after: true, tpRank: rank, tpWorldSize: 2 })));
});

t.test('six ranks sharing one thread (--threads 1) each keep their own parallel state', async (t) => {
  const got = await spawnAll(tpStateWorker, [], { topology: 'ring_1d_6', threads: 1 });
  t.same(got, [0, 1, 2, 3, 4, 5].map((rank) => ({ rank, before: false, after: true, tpRank: rank, tpWorldSize: 6 })));
});

t.test('the parallel-state getters throw ERR_NOT_INITIALIZED before initializeModelParallel', async (t) => {
  await rt.session({}, async (torch) => {
    t.equal(parallelState.modelParallelIsInitialized(torch), false);
    t.throws(() => parallelState.getTensorModelParallelRank(torch), { code: 'ERR_NOT_INITIALIZED' });
    t.throws(() => parallelState.getTensorModelParallelWorldSize(torch), { code: 'ERR_NOT_INITIALIZED' });
  });
});

t.test('initializeModelParallel refuses a TP size other than the world size, naming both', async (t) => {
  const got = await spawnAll(tpSizeWorker, [1]);
  for (const e of got) {
    t.equal(e?.code, 'ERR_WORLD_SIZE_MISMATCH');
    t.match(e?.message, /world size \(2\), got 1$/);
  }
});

t.test('initializeModelParallel refuses to run before initProcessGroup', async (t) => {
  const got = await spawnAll(tpNoGroupWorker, []);
  t.same(got.map((e) => e?.code), ['ERR_NOT_INITIALIZED', 'ERR_NOT_INITIALIZED']);
});

t.test('a rank cannot initialise twice; destroyModelParallel makes it uninitialised and able to initialise again', async (t) => {
  const got = await spawnAll(tpLifecycleWorker, []);
  t.same(
    got,
    [0, 1].map((rank) => [`init: rank ${rank}`, 'init again: ERR_ALREADY_INITIALIZED', 'destroyed: initialised false', 'rank after destroy: ERR_NOT_INITIALIZED', `init after destroy: rank ${rank}`]),
  );
});

// ---- layers ---------------------------------------------------------------------

t.test('building a layer before initializeModelParallel is refused', async (t) => {
  await rt.session({}, async (torch) => {
    t.throws(() => new ColumnParallelLinear(torch, { inFeatures: 4, outFeatures: 4 }), { code: 'ERR_NOT_INITIALIZED' });
  });
});

t.test('layer options are checked at once, each problem naming its field and what was received', async (t) => {
  await rt.session({}, async (torch) => {
    const bad = { inFeatures: 0, outFeatures: 2.5, dtype: 'i32', gatherOutput: true } as unknown as { inFeatures: number; outFeatures: number };
    const e = (() => {
      try {
        new ColumnParallelLinear(torch, bad);
        return undefined;
      } catch (x) {
        return x as { code: string; message: string };
      }
    })();
    t.equal(e?.code, 'ERR_INVALID_OPTIONS');
    const fields = ['inFeatures', 'outFeatures', 'dtype', 'gatherOutput'].filter((f) => e?.message.includes(`${f}`));
    t.same(fields, ['inFeatures', 'outFeatures', 'dtype', 'gatherOutput'], `all four problems in: ${e?.message}`);
  });
});

t.test('ColumnParallelLinear holds a [in, out/ws] weight and an [out/ws] bias, and forward gives [M, out/ws]', async (t) => {
  const got = await spawnAll(columnShapesWorker, [{ m: 5, inFeatures: 12, outFeatures: 8 }]);
  t.same(got, [0, 1].map(() => ({ weight: [12, 4], bias: [4], out: [5, 4], outputSizePerPartition: 4 })));
});

t.test('ColumnParallelLinear forward equals x @ W + b on the rank\'s columns, computed in plain JS, within 1 f16 ulp', async (t) => {
  const [m, k, n] = [8, 32, 16];
  const c: LinearCase = { m, inFeatures: k, outFeatures: n, x: [...seededValues(1, m * k, 'f16')], w: [...seededValues(2, k * n, 'f16')], bias: [...seededValues(3, n, 'f16')] };
  const got = await spawnAll(columnForwardWorker, [c]);
  const full = matmul(c.x, c.w, m, k, n, c.bias ?? undefined);
  const ref = rounded('f16', full.value);
  const half = n / 2;
  got.forEach((y, rank) => {
    const bad: string[] = [];
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < half; j++) {
        const at = i * n + rank * half + j;
        // The kernel rounds f64 -> f32 (dot, bias add) -> f16; the reference f64 -> f16 once: at most 1 ulp apart.
        const tol = ulp('f16', ref[at]) + 2 ** -22 * full.absSum[at];
        if (!(Math.abs(y[i * half + j] - ref[at]) <= tol)) bad.push(`(${i}, ${rank * half + j}): got ${y[i * half + j]}, expected ${ref[at]}`);
      }
    }
    t.same(bad, [], `rank ${rank}: every element within tolerance`);
  });
});

t.test('RowParallelLinear: the sum over ranks of x_k @ W_k equals x @ W, element by element, on every rank', async (t) => {
  const [m, k, n] = [4, 24, 8];
  const c: LinearCase = { m, inFeatures: k, outFeatures: n, x: smallInts(4, m * k), w: smallInts(5, k * n), bias: null };
  const got = await spawnAll(rowForwardWorker, [c], { topology: 'ring_1d_6' });
  const ref = Array.from(matmul(c.x, c.w, m, k, n).value);
  t.ok(ref.some((v) => v !== 0) && new Set(ref).size > n, 'the reference is not trivial');
  t.same(got, got.map(() => ref));
});

t.test('RowParallelLinear adds the bias once, after the all-reduce, not once per rank', async (t) => {
  const [m, k, n] = [3, 8, 4];
  const c: LinearCase = { m, inFeatures: k, outFeatures: n, x: smallInts(6, m * k), w: smallInts(7, k * n), bias: [10, -20, 30, -40] };
  const got = await spawnAll(rowForwardWorker, [c]);
  const ref = Array.from(matmul(c.x, c.w, m, k, n, c.bias ?? undefined).value);
  t.same(got, [ref, ref]);
});

t.test('ColumnParallelLinear refuses outFeatures not divisible by the TP world size, naming both', async (t) => {
  const got = await spawnAll(indivisibleWorker, ['column']);
  for (const e of got) {
    t.equal(e?.code, 'ERR_UNEVEN_SPLIT');
    t.match(e?.message, /outFeatures .*world size \(2\).*got outFeatures = 9$/);
  }
});

t.test('RowParallelLinear refuses inFeatures not divisible by the TP world size, naming both', async (t) => {
  const got = await spawnAll(indivisibleWorker, ['row']);
  for (const e of got) {
    t.equal(e?.code, 'ERR_UNEVEN_SPLIT');
    t.match(e?.message, /inFeatures .*world size \(2\).*got inFeatures = 9$/);
  }
});

// ---- the tp_mlp bench -------------------------------------------------------------

t.test('tp_mlp matches the single-device f16 reference on every rank', async (t) => {
  const [r] = await rt.bench('tp_mlp', { topology: 'ring_1d_6' });
  t.ok(r.ok, r.lines.join('\n'));
  const ws = 6;
  const ref = mlpReference(mlpParameters(MLP_DIMS, 'f16'), MLP_DIMS, 'f16', ws);
  t.equal(r.outputs?.length, ws);
  t.same(
    (r.outputs ?? []).map((y) => compare(Float32Array.from(y), ref.y, ref.tolerance).wrong),
    Array.from({ length: ws }, () => 0),
    'no element beyond tolerance on any rank',
  );
});

t.test('tp_mlp leaves bit-identical outputs on every rank', async (t) => {
  const [r] = await rt.bench('tp_mlp');
  const bits = (r.outputs ?? []).map((y) => Buffer.from(y.buffer, y.byteOffset, y.byteLength).toString('hex'));
  t.equal(bits.length, 2);
  t.equal(new Set(bits).size, 1);
});

t.test('tp_mlp gives the same digest and crit_ns under --threads 1, rank, pe and under jitter', async (t) => {
  // One cube per SIP: tp_mlp uses one PE per rank, and --threads pe then starts 8 threads, not 32.
  const sets = ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1'];
  const ref = (await rt.bench('tp_mlp', { threads: 1, sets }))[0];
  const variants = [
    { threads: 'rank' as const, jitterSeed: null },
    { threads: 'pe' as const, jitterSeed: null },
    { threads: 1 as const, jitterSeed: 5 },
  ];
  const seen = [];
  for (const v of variants) {
    const r = (await rt.bench('tp_mlp', { ...v, sets }))[0];
    seen.push({ layout: `${v.threads}/${v.jitterSeed}`, digest: r.digest, critNs: r.critNs });
  }
  t.same(seen, variants.map((v) => ({ layout: `${v.threads}/${v.jitterSeed}`, digest: ref.digest, critNs: ref.critNs })));
});

// ---- the gemm kernel ------------------------------------------------------------------

t.test('gemm_single_pe gives the same digest and crit_ns under --threads 1, rank, pe and under jitter', async (t) => {
  const sets = ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1']; // its one PE's cube only: 8 threads under --threads pe, not 32
  const ref = (await rt.bench('gemm_single_pe', { threads: 1, sets }))[0];
  t.ok(ref.ok, ref.lines.join('\n'));
  const variants = [
    { threads: 'rank' as const, jitterSeed: null },
    { threads: 'pe' as const, jitterSeed: null },
    { threads: 'rank' as const, jitterSeed: 3 },
    { threads: 'pe' as const, jitterSeed: 11 },
  ];
  const seen = [];
  for (const v of variants) {
    const r = (await rt.bench('gemm_single_pe', { ...v, sets }))[0];
    seen.push({ layout: `${v.threads}/${v.jitterSeed}`, digest: r.digest, critNs: r.critNs, ok: r.ok });
  }
  t.same(seen, variants.map((v) => ({ layout: `${v.threads}/${v.jitterSeed}`, digest: ref.digest, critNs: ref.critNs, ok: true })));
});

t.test('gemm_sweep gives the same digest and table under --threads 1, pe and under jitter', async (t) => {
  const sets = ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1']; // cube 0's 4 PEs are all it uses
  t.ok((await rt.bench('gemm_sweep', { threads: 1, sets }))[0].ok, 'every point of the whole sweep (three dtypes) within 1 ulp');
  // The layouts and jitter move the same kernels, one dtype or three: the comparison runs the f16 third of the grid.
  const options = { dtype: 'f16' };
  const ref = (await rt.bench('gemm_sweep', { threads: 1, sets, options }))[0];
  t.ok(ref.ok);
  for (const v of [{ threads: 'pe' as const }, { threads: 'rank' as const, jitterSeed: 5 }]) {
    const r = (await rt.bench('gemm_sweep', { ...v, sets, options }))[0];
    t.same({ digest: r.digest, rows: r.table?.rows }, { digest: ref.digest, rows: ref.table?.rows }, JSON.stringify(v));
  }
});

t.test('gemm split by output columns over 4 PEs gives the one-PE result, bit for bit, in less virtual time', async (t) => {
  await rt.session({}, async (torch) => {
    const one = await measureGemm(torch, { m: 32, n: 128, k: 64, dtype: 'f16' });
    const four = await measureGemm(torch, { m: 32, n: 128, k: 64, dtype: 'f16', pes: 4 });
    t.same({ wrong: four.wrong, y: Array.from(four.y) }, { wrong: 0, y: Array.from(one.y) });
    t.ok(four.critNs < one.critNs, `4 PEs ${four.critNs} ns < 1 PE ${one.critNs} ns`);
  });
});

t.test('gemm refuses x split by columns (each PE needs all of K), as a kernel error', async (t) => {
  await rt.session({}, async (torch) => {
    const x = torch.zeros([4, 8], { dtype: 'f16', dp: new DPPolicy({ pe: 'column_wise', numPes: 2 }) });
    const w = torch.zeros([8, 4], { dtype: 'f16', dp: new DPPolicy({ numPes: 2 }) });
    const y = torch.zeros([4, 4], { dtype: 'f16', dp: new DPPolicy({ numPes: 2 }) });
    const e = await Promise.resolve(torch.launch('gemm', gemm, x, w, y)).catch((x: unknown) => x as { code: string; cause?: { code?: string } });
    t.equal(e?.code, 'ERR_KERNEL');
    t.equal(e?.cause?.code, 'ERR_SHARD_LAYOUT');
  });
});

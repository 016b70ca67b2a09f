// The wall-clock benches are measured by hand (docs/benchmarks.md), never
// timed here. This runs sim_throughput at one small ring size to check what it
// computes besides time: every rank's all-reduce result, the same crit_ns under
// every layout, the message count, a bare Atomics ring that completes, and the
// one-thread model's all-reduce result; and barrier_throughput at small sizes,
// whose bare barriers check that no thread passes a barrier early.
import { execa } from 'execa';
import './helpers/cli.js'; // the node processes started here run without tap's NODE_OPTIONS hooks
import t from 'tap';
import { bareBarrier } from '../benches/barrier/bare-barriers.js';
import { bareRing } from '../benches/sim/bare-ring.js';
import { allEqual, modelFloor } from '../benches/sim/model-floor.js';
import { ringMessages, worker } from '../benches/sim_throughput.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [new URL('../benches/sim_throughput.js', import.meta.url).href, new URL('../benches/barrier_throughput.js', import.meta.url).href] });
t.teardown(() => rt.close());

t.test('sim_throughput at p = 4: correct on every rank, one crit_ns across layouts, every rate reported', async (t) => {
  // One ring size, one warm-up and two timed spawns per layout (two, so the crit_ns sequence check compares spawns).
  const [r, ...rest] = await rt.bench('sim_throughput', { options: { sizes: '4', spawns: '1,2' } });
  t.equal(rest.length, 0, 'one ring size');
  t.equal(r.worldSize, 4);
  t.equal(r.ok, true, 'every rank holds p on every element, and crit_ns is the same under --threads 1, 2 and rank');
  t.ok(r.critNs > 0, `crit_ns ${r.critNs}`);
  t.match(r.digest, /^[0-9a-f]{16}$/, 'the digest hashes the simulated result (every spawn\'s crit_ns), not nothing');
  for (const k of ['threads_1_msgs_per_s', 'threads_2_msgs_per_s', 'threads_rank_msgs_per_s', 'bare_ring_msgs_per_s', 'model_floor_msgs_per_s']) {
    t.ok(Number(r.extra?.[k]) > 0, `${k} reported`);
  }
  // Each layout against the floor run right after each of its spawns (median of the pairs' ratios).
  for (const k of ['threads_1_vs_model', 'threads_2_vs_model', 'threads_rank_vs_bare']) {
    const v = r.extra?.[k];
    t.ok(typeof v === 'number' && Number.isFinite(v) && v > 0, `${k} reported (${String(v)})`);
  }
  for (const l of ['1', '2', 'rank']) {
    const best = Number(r.extra?.[`threads_${l}_best_msgs_per_s`]);
    t.ok(best >= Number(r.extra?.[`threads_${l}_msgs_per_s`]), `--threads ${l}: the best spawn (${best}) is at least the median`);
    // Read by rank 0 at its start and by the last rank at its end: NaN if either read is missing.
    const cpu = r.extra?.[`threads_${l}_cpu_us_per_msg`];
    t.ok(typeof cpu === 'number' && Number.isFinite(cpu) && cpu >= 0, `--threads ${l}: process CPU per message reported (${String(cpu)} us)`);
  }
});

t.test('the all-reduce message count the bench expects is the one the simulator sends, for even and uneven chunks', async (t) => {
  // The bench checks its sessions against ringMessages; here the simulator's own count, over one all-reduce each.
  for (const [p, n, pieceElems] of [
    [4, 16384, 256],
    [3, 1000, 64],
    [5, 7, 2],
  ]) {
    const sets = [`system.sips.count=${p}`, `ccl.vc_chunk_size=${pieceElems * 4}`];
    const run = await rt.session({ topology: 'ideal', threads: 1, sets }, async (torch) => {
      const ranks = await torch.multiprocessing.spawn(worker, { args: [n], nprocs: p });
      return ranks.every((r) => r.ok);
    });
    t.equal(run.value, true, `p = ${p}, n = ${n}: every rank holds p on every element`);
    t.equal(run.report.messages, ringMessages(p, n, pieceElems), `p = ${p}, n = ${n}, pieces of ${pieceElems} elements`);
  }
});

t.test('the bare Atomics ring passes every step around every thread and stops its threads', async (t) => {
  const ms = await bareRing(3, 50);
  t.ok(Number.isFinite(ms) && ms >= 0, `finished in ${ms.toFixed(1)} ms`);
});

t.test('the one-thread model all-reduces correctly, whatever the sizes (chunks and pieces uneven)', async (t) => {
  for (const [p, n, piece] of [
    [2, 8, 4],
    [5, 1001, 7],
    [8, 16384, 256],
    [3, 2, 1],
  ]) {
    const r = await modelFloor(p, n, piece);
    t.equal(r.ok, true, `p = ${p}, n = ${n}, pieces of ${piece}: every element is p on every rank`);
  }
});

t.test('the ranks\' check answers as every element === v would, wherever the odd element is', async (t) => {
  const a = new Float32Array(1000).fill(64);
  t.equal(allEqual(a, 64), true);
  t.equal(allEqual(new Float32Array(0), 64), true, 'an empty array passes, as every() does');
  for (const at of [0, 499, 999]) {
    for (const odd of [63, NaN, Infinity]) {
      const b = a.slice();
      b[at] = odd;
      t.equal(allEqual(b, 64), b.every((v) => v === 64), `${odd} at ${at}`);
      t.equal(allEqual(b, 64), false);
    }
  }
  t.equal(allEqual(new Float32Array([0, -0]), 0), true, '-0 equals 0, as === says');
  t.equal(allEqual(new Float32Array([NaN]), NaN), false, 'NaN equals nothing, as === says');
});

t.test('barrier_throughput at n = 2 and 3: no thread passes a barrier early, every figure reported', async (t) => {
  const results = await rt.bench('barrier_throughput', { options: { sizes: '2,3', runs: '50,1' } });
  t.same(results.map((r) => r.worldSize), [2, 3], 'one result per size');
  for (const r of results) {
    t.equal(r.ok, true, `n = ${r.worldSize}: ok`);
    t.equal(r.extra?.violations, 0, `n = ${r.worldSize}: no thread of the bare barriers saw another short of a barrier it had passed`);
    for (const k of ['host_us_per_barrier', 'atomics_us_per_barrier', 'message_us_per_barrier', 'ratio_message_atomics', 'host_vs_atomics', 'host_vs_message']) {
      const v = r.extra?.[k];
      t.ok(typeof v === 'number' && Number.isFinite(v) && v > 0, `n = ${r.worldSize}: ${k} reported (${String(v)})`);
    }
  }
});

t.test('the bare barriers and wake-up patterns hold every thread at every barrier, and the check catches threads that are not held', async (t) => {
  for (const kind of ['atomics', 'message'] as const) {
    const run = await bareBarrier(kind, 5, 200);
    t.equal(run.violations, 0, `${kind}: 5 threads, 200 barriers, none passed early`);
  }
  // 4 threads: a tree with a grandchild, a chain whose first two woken threads must pass the wake on, the synchronous waits.
  for (const kind of ['tree', 'chain', 'serial', 'sync', 'sync-await'] as const) {
    const run = await bareBarrier(kind, 4, 200);
    t.equal(run.violations, 0, `${kind}: 4 threads, 200 barriers, none passed early`);
  }
  // The negative control: with no barrier, 4 threads on 2 cores run ahead of each other.
  const none = await bareBarrier('none', 4, 200);
  t.ok(none.violations > 0, `no barrier: ${none.violations} threads seen short of a barrier another had passed`);
});

t.test('the wall-clock benches refuse a malformed option before running, naming its flag', async (t) => {
  for (const [bench, flag, v] of [
    ['sim_throughput', 'sizes', '1,a'],
    ['sim_throughput', 'sizes', '1,4'],
    ['sim_throughput', 'spawns', '2'],
    ['sim_throughput', 'spawns', '1,0'],
    ['barrier_throughput', 'sizes', '1,4'],
    ['barrier_throughput', 'runs', '100'],
    ['barrier_throughput', 'runs', '100,x'],
  ] as const) {
    await t.test(`${bench}: --${flag} ${v}`, async (tt) => {
      await tt.rejects(rt.bench(bench, { options: { [flag]: v } }), { code: 'ERR_INVALID_BENCH_OPTION', message: new RegExp(`^${bench}: --${flag}: .*got '${v}'$`) });
    });
  }
});

t.test('the instruction-count workload runs its spawns and exits by itself; a bad count exits 2', async (t) => {
  const script = new URL('../benches/sim/instructions.js', import.meta.url).pathname;
  const ok = await execa('node', [script, '2', '3'], { reject: false });
  t.equal(ok.exitCode, 0, ok.stderr);
  t.match(ok.stdout, /^2 spawns of a ring all-reduce of 64 KiB per rank, p = 3, --threads 1: OK$/m);
  const bad = await execa('node', [script, '0'], { reject: false });
  t.equal(bad.exitCode, 2);
  t.match(bad.stderr, /^instructions: spawns must be a positive integer, got '0'$/m);
});

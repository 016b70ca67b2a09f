// Runs on: main thread (tap). Covers: the backpressure statistics (issue 15
// item 2, lib/trace/stats.ts, docs/backpressure.md) — per IPCQ ring traffic,
// credit and data waits in virtual time, peak occupancy; per barrier arrivals
// and spread — the same under every thread layout and jitter, and without
// effect on results; --stats through the CLI (--json carries the same object,
// RunOutcome.stats, in each result).
import t from 'tap';
import type { RunConfig } from '../lib/bench/contract.js';
import { CCL_FIXTURES, lateBarrierWorker } from './fixtures/ccl.js';
import { kernbench } from './helpers/cli.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());
const run = (bench: string, over: Partial<RunConfig>) => rt.run(bench, over);

const P = 3;
const N = 3072; // f16: N/P elements = 2 KiB per step, 2 pieces of vc_chunk_size 1024
/** The ring all-reduce on P ranks of the ideal ring with `nSlots` slots per ring; its stats and results. */
async function ring(nSlots: number, over: Partial<RunConfig> = {}) {
  const sets = [`ccl.world_size=${P}`, `ccl.n_elem=${N}`, `ccl.n_slots=${nSlots}`, 'ccl.vc_chunk_size=1024'];
  return run('ccl_allreduce', { topology: 'ideal_ring_1d_6', sets, stats: true, ...over });
}

t.test('the statistics are the same under --threads 1, rank, pe and jitter', async (t) => {
  const ref = (await ring(1, { threads: 1 })).stats;
  t.ok(ref && ref.rings.length === P, 'one row per ring');
  t.same((await ring(1, { threads: 'rank' })).stats, ref, 'rank');
  t.same((await ring(1, { threads: 'pe' })).stats, ref, 'pe');
  t.same((await ring(1, { threads: 'rank', jitterSeed: 11 })).stats, ref, 'jitter');
});

t.test('recording statistics changes no result, digest or crit_ns', async (t) => {
  const sets = [`ccl.world_size=${P}`, `ccl.n_elem=${N}`, 'ccl.n_slots=1'];
  const plain = await run('ccl_allreduce', { topology: 'ideal_ring_1d_6', sets });
  const withStats = await run('ccl_allreduce', { topology: 'ideal_ring_1d_6', sets, stats: true });
  t.equal(plain.stats, undefined, 'no statistics unless asked');
  t.same(
    withStats.results.map((r) => [r.ok, r.critNs, r.digest]),
    plain.results.map((r) => [r.ok, r.critNs, r.digest]),
  );
});

t.test('each ring carries 2 (p - 1) messages of N/p elements, cut into vc_chunk_size pieces', async (t) => {
  const s = (await ring(4)).stats;
  const bytes = (N / P) * 2;
  const piecesPerMessage = Math.ceil(bytes / 1024);
  t.same(
    s?.rings.map((r) => [r.messages, r.pieces, r.bytes]),
    Array.from({ length: P }, () => [2 * (P - 1), 2 * (P - 1) * piecesPerMessage, 2 * (P - 1) * bytes]),
  );
});

t.test('with one slot the senders wait for credits and a ring holds one piece at most; with a wide window they never wait', async (t) => {
  const narrow = (await ring(1)).stats;
  const wide = (await ring(8)).stats;
  t.ok((narrow?.total.creditWaits ?? 0) > 0 && (narrow?.total.creditWaitPs ?? 0) > 0, 'credit waits with n_slots 1');
  t.equal(narrow?.total.peakOccupancy, 1, 'peak occupancy 1 with n_slots 1');
  t.equal(wide?.total.creditWaits, 0, 'no credit wait with n_slots 8');
  t.ok((wide?.total.peakOccupancy ?? 0) > 1 && (wide?.total.peakOccupancy ?? 9) <= 8, 'a wide window holds several pieces, never more than n_slots');
});

t.test('a barrier reports its arrivals and the spread between the first and the last', async (t) => {
  const delayNs = 500;
  const r = await rt.session({ topology: 'ideal_ring_1d_6', stats: true }, (torch) => torch.multiprocessing.spawn(lateBarrierWorker, { args: [[0, 1, 2], 1, delayNs], nprocs: 3 }));
  const late = r.stats?.barriers.filter((b) => b.spreadPs > 0);
  t.same(late, [{ index: late?.[0]?.index, arrivals: 3, spreadPs: delayNs * 1000 }]);
});

t.test('--stats prints a row per ring and a total, in ring order', async (t) => {
  const sets = ['ccl.world_size=3', 'ccl.n_slots=1'];
  const [text, ref] = await Promise.all([
    kernbench(['run', '--bench', 'ccl_allreduce', '--topology', 'ideal_ring_1d_6', ...sets.flatMap((x) => ['--set', x]), '--stats']),
    run('ccl_allreduce', { topology: 'ideal_ring_1d_6', sets, stats: true }),
  ]);
  t.equal(text.exitCode, 0);
  const stats = ref.stats;
  const rows = text.stdout.split('\n').filter((l) => /^\s+\d+\s+pe\d+@sip\d+/.test(l));
  t.same(
    rows.map((l) => Number(l.trim().split(/\s+/)[0])),
    stats?.rings.map((r) => r.ring),
    'the table has the rings of the statistics, in ring order',
  );
  t.match(text.stdout, new RegExp(`^\\s+total\\s+\\d+\\s+${stats?.total.pieces}\\s`, 'm'), 'and their total');
});

// Runs on: main (evaluate) and executor threads (worker, one call per rank).
// Simulator speed: ring all-reduce on an ideal ring of p PEs with 64 KiB per
// rank, reported as simulated IPCQ messages per wall-clock second, under the
// reference layout (--threads 1), two threads, and one thread per rank
// (--threads rank), next to a bare Atomics ring of p threads (./sim/bare-ring.ts):
// the same cross-thread wakes as --threads rank with nothing simulated, and a
// one-thread model (./sim/model-floor.ts): the same steps, data and awaits as p
// coroutines on one thread, with nothing simulated. Each spawn is followed at
// once by its floor run (the bare ring for --threads rank, the model for the
// others), and each ratio is the median over spawns of the pair's ratio: on
// this shared host the same code runs up to 2x faster or slower from one
// minute to the next, so only runs of the same seconds compare.
// Wall time is measured here, in a bench, never in a test.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, intList, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { median } from '../lib/bench/stats.js';
import type { Tensor } from '../lib/host/tensor.js';
import type { Torch } from '../lib/host/torch.js';
import type { ThreadLayout } from '../lib/config/plan.js';
import { bareRing } from './sim/bare-ring.js';
import { allEqual, modelFloor } from './sim/model-floor.js';

export const options = (z: Zod) => z.object({
  sizes: intList(z, 2).prefault('8,64,256').describe('ring sizes (PEs), e.g. 64 for one'),
  spawns: z
    .string()
    .regex(/^[0-9]+,[1-9][0-9]*$/, 'takes warm-up,timed (integers, timed >= 1)')
    .transform((text) => text.split(',').map(Number) as [number, number])
    .optional()
    .describe('spawns per layout as warm-up,timed, e.g. 1,1 for a quick check (default: 2,7, and 1,1 from 256 PEs on)'),
});

export default defineBench({
  description: 'simulator speed: ring all-reduce on an ideal ring of 8/64/256 PEs, 64 KiB per rank, IPCQ messages per wall-second under --threads 1, 2 and rank, against a bare Atomics ring and a one-thread model',
  options,
  evaluate,
});

const BYTES_PER_RANK = 64 * 1024;
const LAYOUTS: ThreadLayout[] = [1, 2, 'rank'];
/**
 * Spawns per layout: the first `warmUp` warm the threads up (modules, JIT), the next
 * `timed` are timed; the median is reported. From p = 256 on, one of each: a spawn
 * of one thread per rank takes seconds there. (Its third and later spawns took minutes
 * until decision 0238, every isolate optimising the same code.)
 */
function spawnsFor(p: number, given: [number, number] | undefined): { warmUp: number; timed: number } {
  if (given) return { warmUp: given[0], timed: given[1] };
  return p >= 256 ? { warmUp: 1, timed: 1 } : { warmUp: 2, timed: 7 };
}

export interface RankRun {
  ok: boolean;
  critNs: number;
  /** Wall clock (ms since the epoch) around this rank's all-reduce: set-up and checks are not timed. */
  t0: number;
  t1: number;
  /**
   * Process-wide CPU (user + system, us) and voluntary context switches (a
   * thread going to sleep: roughly one per cross-thread wake), read by rank 0
   * as its all-reduce starts and by the last rank as its own ends: the spawn's
   * window, approximately. Two reads per spawn, so the timing is not disturbed.
   */
  usage: { cpuUs: number; sleeps: number } | null;
}

function usageNow(): { cpuUs: number; sleeps: number } {
  const u = process.resourceUsage();
  return { cpuUs: u.userCPUTime + u.systemCPUTime, sleeps: u.voluntaryContextSwitches };
}

export function worker(rank: number, nElem: number, torch: Torch): Promise<RankRun> {
  return workerRounds(rank, nElem, 1, torch);
}

/**
 * A rank's set-up before its timed all-reduce: its device, the world group, a
 * tensor of `nElem` f32 ones, and a barrier. Also ./sim/window-worker.ts's.
 */
export async function rankSetUp(rank: number, nElem: number, torch: Torch): Promise<{ t: Tensor; ws: number }> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([nElem], { dtype: 'f32' });
  await t.copy_(torch.fromArray(new Float32Array(nElem).fill(1)));
  await torch.distributed.barrier();
  return { t, ws: torch.distributed.getWorldSize() };
}

/**
 * The worker with its all-reduce run `rounds` times in a row (every element ends
 * as p^rounds: exact in f32 while that is at most 2^24). ./sim/instructions.ts
 * counts the all-reduce alone as the difference of two round counts.
 */
export async function workerRounds(rank: number, nElem: number, rounds: number, torch: Torch): Promise<RankRun> {
  const { t, ws } = await rankSetUp(rank, nElem, torch);
  const t0 = performance.timeOrigin + performance.now();
  const start = rank === 0 ? usageNow() : null;
  let work = await torch.distributed.allReduce(t, { op: 'sum' });
  for (let i = 1; i < rounds; i++) work = await torch.distributed.allReduce(t, { op: 'sum' });
  const t1 = performance.timeOrigin + performance.now();
  const end = rank === ws - 1 ? usageNow() : null;
  // Ranks may share a thread: no rank checks its result until every rank's all-reduce is timed.
  await torch.distributed.barrier();
  const out = await t.numpy();
  const want = ws ** rounds;
  return { ok: allEqual(out.data, want), critNs: work.critNs, t0, t1, usage: start ?? end };
}


/**
 * IPCQ messages of one ring all-reduce of p ranks with n elements each, cut in
 * pieces of `pieceElems` (lib/ccl/steps.ts): every rank sends every chunk but
 * one in each half, so 2 (p - 1) times the pieces of all p chunks.
 */
export function ringMessages(p: number, n: number, pieceElems: number): number {
  let pieces = 0;
  for (let c = 0; c < p; c++) {
    const count = Math.floor(((c + 1) * n) / p) - Math.floor((c * n) / p);
    pieces += Math.max(1, Math.ceil(count / pieceElems));
  }
  return 2 * (p - 1) * pieces;
}

/** What a layout is compared with: one thread per rank with the bare Atomics ring, the others with the one-thread model. */
type Floor = 'bare' | 'model';
const floorOf = (threads: ThreadLayout): Floor => (threads === 'rank' ? 'bare' : 'model');

/** One spawn of a layout and the floor run right after it. */
interface PairedRun {
  ranks: RankRun[];
  floorMs: number;
}

async function evaluate(ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const { sizes } = ctx.options;
  const results: BenchResult[] = [];
  const nElem = BYTES_PER_RANK / 4;
  const pieceElems = Math.floor(ctx.ccl.vc_chunk_size / 4);
  for (const p of sizes) {
    const { warmUp, timed } = spawnsFor(p, ctx.options.spawns);
    const messages = ringMessages(p, nElem, pieceElems);
    const rates: Record<string, number> = {};
    const bests: Record<string, number> = {};
    const cpus: Record<string, number> = {};
    const vsFloor: Record<string, number> = {};
    const floorMs: Record<Floor, number[]> = { bare: [], model: [] };
    let critSequence: number[] = [];
    let ok = true;
    const digests = new Set<string>();
    const runFloor = async (kind: Floor): Promise<number> => {
      if (kind === 'bare') return bareRing(p, messages / p);
      const f = await modelFloor(p, nElem, pieceElems);
      ok &&= f.ok;
      return f.ms;
    };
    for (const threads of LAYOUTS) {
      // Identical spawns in one session (the same threads): warm-ups, then the timed ones.
      // Each spawn is followed at once by its floor, so that each ratio compares two runs
      // of the same seconds: this host's speed moves by up to 2x between minutes.
      // The ideal topology carries its own IPCQ window (64 KiB pieces); the run keeps the
      // configured piece size, so the message count and the floors match the simulator's.
      const run = await ctx.session({ topology: 'ideal', threads, sets: [...ctx.config.sets, `system.sips.count=${p}`, `ccl.vc_chunk_size=${ctx.ccl.vc_chunk_size}`] }, async (torch) => {
        const runs: PairedRun[] = [];
        for (let i = 0; i < warmUp + timed; i++) {
          const ranks = await torch.multiprocessing.spawn(worker, { args: [nElem], nprocs: p });
          runs.push({ ranks, floorMs: await runFloor(floorOf(threads)) });
        }
        return runs;
      });
      // The simulator sent exactly the all-reduce's messages, no more and no fewer.
      ok &&= run.report.messages === messages * (warmUp + timed);
      const pairs = run.value.slice(warmUp);
      const walls = pairs.map(({ ranks }) => Math.max(...ranks.map((r) => r.t1)) - Math.min(...ranks.map((r) => r.t0)));
      const wallMs = median(walls);
      floorMs[floorOf(threads)].push(...pairs.map((r) => r.floorMs));
      // Rate over floor rate, pair by pair: floor time over spawn time.
      vsFloor[`threads_${threads}`] = median(pairs.map((r, i) => r.floorMs / walls[i]));
      // A spawn starts while the previous one's last credits are still in flight, so the
      // first spawn's crit_ns differs from the later ones'; each layout must give the same sequence.
      const crits = run.value.map(({ ranks }) => Math.max(...ranks.map((r) => r.critNs)));
      ok &&= run.value.every(({ ranks }) => ranks.every((r) => r.ok));
      critSequence = crits;
      digests.add(crits.join(','));
      // CPU and sleeps per message over the timed spawns' windows (rank 0's start to the last rank's end).
      const costs = pairs.map(({ ranks }) => {
        const a = ranks[0].usage;
        const b = ranks[ranks.length - 1].usage;
        return a && b ? { cpuUs: (b.cpuUs - a.cpuUs) / messages, sleeps: (b.sleeps - a.sleeps) / messages } : { cpuUs: NaN, sleeps: NaN };
      });
      const cpuUs = median(costs.map((c) => c.cpuUs));
      const sleeps = median(costs.map((c) => c.sleeps));
      cpus[`threads_${threads}`] = cpuUs;
      rates[`threads_${threads}`] = messages / (wallMs / 1000);
      bests[`threads_${threads}`] = messages / (Math.min(...walls) / 1000);
      const floorName = floorOf(threads) === 'bare' ? 'the bare ring' : 'the one-thread model';
      ctx.log(`  p=${p} --threads ${threads}: ${messages} messages in ${walls.map((w) => w.toFixed(1)).join(' / ')} ms, median ${(rates[`threads_${threads}`] / 1e3).toFixed(1)} k msgs/s, best spawn ${(bests[`threads_${threads}`] / 1e3).toFixed(1)} k, ${vsFloor[`threads_${threads}`].toFixed(2)} of ${floorName} run after each spawn (${pairs.map((r) => r.floorMs.toFixed(1)).join(' / ')} ms); per message: ${cpuUs.toFixed(1)} us of process CPU, ${sleeps.toFixed(2)} thread sleeps; ${run.report.epochGcs} idle-time scavenges over the session (decision 0009)`);
    }
    // The floors' own rates: the median of their runs paired with the timed spawns.
    const bare = messages / (median(floorMs.bare) / 1000);
    const floor = messages / (median(floorMs.model) / 1000);
    const same = digests.size === 1;
    results.push({
      bench: ctx.bench,
      algorithm: 'ring_allreduce',
      topology: `ideal (p=${p})`,
      worldSize: p,
      nElem,
      dtype: 'f32',
      ok: ok && same,
      critNs: critSequence[critSequence.length - 1],
      // The digest covers the simulated result: every spawn's crit_ns (the same for every layout, checked).
      outputs: [Float64Array.from(critSequence)],
      lines: [
        `  p=${p}: ${LAYOUTS.map((l) => `--threads ${l}: ${(rates[`threads_${l}`] / 1e3).toFixed(1)} k msgs/s (best spawn ${(bests[`threads_${l}`] / 1e3).toFixed(0)} k)`).join(', ')}; best/rank = ${(Math.max(...Object.values(rates)) / rates.threads_rank).toFixed(2)}; same crit_ns across layouts: ${same}`,
        `  p=${p}: bare Atomics ring of ${p} threads (wakes only, no simulation): ${(bare / 1e3).toFixed(1)} k msgs/s; --threads rank reaches ${vsFloor.threads_rank.toFixed(2)} of it`,
        `  p=${p}: one-thread model (${p} coroutines, same data and awaits, nothing simulated): ${(floor / 1e3).toFixed(1)} k msgs/s; --threads 1 reaches ${vsFloor.threads_1.toFixed(2)} of it, --threads 2 ${vsFloor.threads_2.toFixed(2)}`,
        `  p=${p}: median of ${timed} timed spawn(s) after ${warmUp} warm-up(s) per layout, each ratio the median over spawns of (floor run right after the spawn) / (spawn)`,
      ],
      extra: {
        ...Object.fromEntries(Object.entries(rates).map(([k, v]) => [`${k}_msgs_per_s`, Math.round(v)])),
        ...Object.fromEntries(Object.entries(bests).map(([k, v]) => [`${k}_best_msgs_per_s`, Math.round(v)])),
        ...Object.fromEntries(Object.entries(cpus).map(([k, v]) => [`${k}_cpu_us_per_msg`, Math.round(v * 10) / 10])),
        ...Object.fromEntries(LAYOUTS.map((l) => [`threads_${l}_vs_${floorOf(l)}`, Math.round(vsFloor[`threads_${l}`] * 1000) / 1000])),
        bare_ring_msgs_per_s: Math.round(bare),
        model_floor_msgs_per_s: Math.round(floor),
      },
    });
  }
  results[0]?.lines.unshift('  (reproduce: node bin/kernbench.js run --bench sim_throughput)');
  return results;
}

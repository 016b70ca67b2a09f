// Runs on: main (evaluate) and executor threads (worker, one call per rank).
// Barrier latency: kernbench's host barrier (torch.distributed.barrier, one
// thread per rank: --threads rank) against the same counter protocol on bare
// threads (an Atomics barrier) and a postMessage barrier with main as the hub
// (./barrier/bare-barriers.ts), for 2, 4, 8 and 16 participants. The three are
// run in rounds, one after another, and each ratio is the median of the rounds'
// ratios: on this shared host the same code runs up to 2x faster or slower from
// one minute to the next, so only runs of the same seconds compare.
// Wall time is measured here, in a bench, never in a test.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, intList, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { median } from '../lib/bench/stats.js';
import type { Torch } from '../lib/host/torch.js';
import { bareBarrier } from './barrier/bare-barriers.js';

export const options = (z: Zod) => z.object({
  sizes: intList(z, 2).prefault('2,4,8,16').describe('participants, e.g. 2,4 for fewer sizes'),
  runs: z
    .string()
    .regex(/^[1-9][0-9]*,[1-9][0-9]*$/, 'takes barriers,rounds (positive integers)')
    .transform((text) => text.split(',').map(Number) as [number, number])
    .optional()
    .describe('barriers per timed run and timed rounds, one count for every size, e.g. 1000,5 (default: 16000/n barriers, 5 rounds)'),
});

export default defineBench({
  description: 'barrier latency: the host barrier (one thread per rank) vs the same Atomics counter on bare threads vs a postMessage barrier, 2/4/8/16 participants',
  options,
  evaluate,
});

/**
 * Barriers per timed run (each contender) at 16 participants, and timed rounds after one
 * warm-up round. Smaller sizes run proportionally more barriers (COUNT * 16 / n), so every
 * round lasts about as long: at n = 2 a barrier takes ~20 us, and 1 000 of them (20 ms) left
 * the rounds to start-up and the JIT (the host barrier measured 0.60-0.94 of the bare one
 * with 1 000, 1.03-1.11 with 10 000; docs/benchmarks.md). The option --runs sets
 * one count for every size.
 */
const COUNT = 1000;
const ROUNDS = 5;
/**
 * The warm-up round runs this many rounds' worth of barriers for every contender: the
 * host barrier's longer path needs ~2 000-3 000 barriers before V8 has optimised it (at
 * n = 16 its first 1 000-barrier rounds after a 1 000-barrier warm-up took 510-563 and
 * 342-427 us a barrier, later ones 150-240 us; the bare barriers were steady from the
 * first), so one round of warm-up measured the JIT, not the barrier (docs/benchmarks.md).
 */
const WARMUP_ROUNDS = 3;
const countFor = (n: number): number => Math.round((COUNT * 16) / n);

export interface RankWindow {
  /** Wall clock (ms since the epoch) before this rank's first timed barrier and after its last. */
  t0: number;
  t1: number;
}

export async function worker(rank: number, count: number, torch: Torch): Promise<RankWindow> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  // Start together: the timed barriers then measure barriers, not the ranks' start-up skew.
  await torch.distributed.barrier();
  const t0 = performance.timeOrigin + performance.now();
  for (let i = 0; i < count; i++) await torch.distributed.barrier();
  return { t0, t1: performance.timeOrigin + performance.now() };
}

const us = (ms: number, count: number): number => (ms * 1000) / count;

async function evaluate(ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const { sizes } = ctx.options;
  const [given, rounds] = ctx.options.runs ?? [0, ROUNDS];
  const results: BenchResult[] = [];
  for (const n of sizes) {
    const count = given > 0 ? given : countFor(n);
    // Per round: ms for `count` barriers of each contender.
    const host: number[] = [];
    const bare = { atomics: [] as number[], message: [] as number[] };
    let violations = 0;
    await ctx.session({ topology: 'ideal', threads: 'rank', sets: [...ctx.config.sets, `system.sips.count=${n}`] }, async (torch) => {
      // Round 0 warms every contender up (modules, JIT) with WARMUP_ROUNDS rounds' worth of barriers, and is not counted.
      for (let r = 0; r <= rounds; r++) {
        const c = r === 0 ? WARMUP_ROUNDS * count : count;
        const ranks = await torch.multiprocessing.spawn(worker, { args: [c], nprocs: n });
        const runs = { atomics: await bareBarrier('atomics', n, c), message: await bareBarrier('message', n, c) };
        violations += runs.atomics.violations + runs.message.violations;
        if (r === 0) continue;
        host.push(Math.max(...ranks.map((x) => x.t1)) - Math.min(...ranks.map((x) => x.t0)));
        bare.atomics.push(runs.atomics.ms);
        bare.message.push(runs.message.ms);
      }
    });
    const perBarrier = { host: us(median(host), count), atomics: us(median(bare.atomics), count), message: us(median(bare.message), count) };
    // Pair by pair: how many times longer a message barrier takes than an Atomics one, and the host barrier's share of the bare Atomics barrier's speed.
    const messageOverAtomics = median(bare.message.map((m, i) => m / bare.atomics[i]));
    const hostVsAtomics = median(host.map((h, i) => bare.atomics[i] / h));
    // Issue 15's second bar: the host barrier's speed against the postMessage barrier's (above 1: faster).
    const hostVsMessage = median(host.map((h, i) => bare.message[i] / h));
    ctx.log(`  n=${n}: ${count} barriers x ${rounds} rounds; host barrier ${host.map((x) => us(x, count).toFixed(1)).join(' / ')} us, Atomics ${bare.atomics.map((x) => us(x, count).toFixed(1)).join(' / ')} us, postMessage ${bare.message.map((x) => us(x, count).toFixed(1)).join(' / ')} us per barrier`);
    results.push({
      bench: ctx.bench,
      algorithm: 'host barrier',
      topology: `ideal (n=${n})`,
      worldSize: n,
      nElem: count,
      dtype: 'none',
      ok: violations === 0,
      critNs: 0,
      lines: [
        `  n=${n}: per barrier (median of ${rounds} rounds): host barrier (--threads rank) ${perBarrier.host.toFixed(1)} us, bare Atomics ${perBarrier.atomics.toFixed(1)} us, postMessage ${perBarrier.message.toFixed(1)} us`,
        `  n=${n}: postMessage / Atomics = ${messageOverAtomics.toFixed(1)}x; the host barrier reaches ${hostVsAtomics.toFixed(2)} of the bare Atomics barrier and ${hostVsMessage.toFixed(2)} of the postMessage barrier (medians of the rounds' ratios); threads passing a barrier early: ${violations}`,
      ],
      extra: {
        host_us_per_barrier: Math.round(perBarrier.host * 10) / 10,
        atomics_us_per_barrier: Math.round(perBarrier.atomics * 10) / 10,
        message_us_per_barrier: Math.round(perBarrier.message * 10) / 10,
        ratio_message_atomics: Math.round(messageOverAtomics * 100) / 100,
        host_vs_atomics: Math.round(hostVsAtomics * 1000) / 1000,
        host_vs_message: Math.round(hostVsMessage * 1000) / 1000,
        violations,
      },
    });
  }
  results[0]?.lines.unshift('  (reproduce: node bin/kernbench.js run --bench barrier_throughput)');
  return results;
}

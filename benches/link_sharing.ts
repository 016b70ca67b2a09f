// Runs on: main (evaluate) and executor threads (worker, one call per rank).
// Wall-clock cost of shared links (timing.link_sharing: max_min, decision 0023):
// the same all-reduces with links shared and not, in alternating rounds of one
// run, on the ideal ring. With sharing every IPCQ piece waits for the
// coordinator's link arbiter (one thread hop), and no single-user fast path
// exists yet: the ratio shared / unshared per round, and its median, says what
// that costs. The virtual times are printed too (the ring's are equal: its
// flows never meet; the tree's differ: its flows do).
// Wall time is measured here, in a bench, never in a test.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, z } from '../lib/bench/define.js';
import { median } from '../lib/bench/stats.js';
import type { Torch } from '../lib/host/torch.js';

const options = z.object({
  ranks: z.number().int().min(2).default(8).describe('ranks (SIPs of the ideal ring)'),
  bytes: z.number().int().min(4).default(65536).describe('bytes per rank (f32)'),
  reps: z.number().int().min(1).default(5).describe('all-reduces per timed run'),
  rounds: z.number().int().min(1).default(5).describe('timed rounds (each: unshared, then shared), after one warm-up round'),
});

export default defineBench({
  description: 'wall time of all-reduces with links shared (timing.link_sharing: max_min) against not shared, ring and tree on the ideal ring',
  options,
  evaluate,
});

interface RankRun {
  /** Wall clock (ms since the epoch) before the first timed all-reduce and after the last. */
  t0: number;
  t1: number;
  critNs: number;
}

export async function worker(rank: number, nElem: number, reps: number, torch: Torch): Promise<RankRun> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([1, nElem], { dtype: 'f32' });
  await torch.distributed.barrier();
  const t0 = performance.timeOrigin + performance.now();
  let critNs = 0;
  for (let i = 0; i < reps; i++) critNs = (await torch.distributed.allReduce(t, { op: 'sum' })).critNs;
  return { t0, t1: performance.timeOrigin + performance.now(), critNs };
}

const ALGORITHMS = ['ring_allreduce', 'tree_allreduce'];

async function evaluate(ctx: BenchContext<z.output<typeof options>>): Promise<BenchResult[]> {
  const { ranks, bytes, reps, rounds } = ctx.options;
  const nElem = Math.floor(bytes / 4);
  const results: BenchResult[] = [];
  for (const algorithm of ALGORITHMS) {
    const ms = { none: [] as number[], max_min: [] as number[] };
    const crit = { none: 0, max_min: 0 };
    for (let r = 0; r <= rounds; r++) {
      for (const sharing of ['none', 'max_min'] as const) {
        const run = await ctx.session({ topology: 'ideal', algorithm, sets: [...ctx.config.sets, `system.sips.count=${ranks}`, `timing.link_sharing=${sharing}`] }, (torch) =>
          torch.multiprocessing.spawn(worker, { args: [nElem, reps], nprocs: ranks }),
        );
        const rs = run.value;
        crit[sharing] = Math.max(...rs.map((x) => x.critNs));
        // Round 0 warms up (modules, JIT) and is not counted.
        if (r > 0) ms[sharing].push(Math.max(...rs.map((x) => x.t1)) - Math.min(...rs.map((x) => x.t0)));
      }
    }
    const ratio = median(ms.max_min.map((s, i) => s / ms.none[i]));
    const per = (xs: number[]): string => xs.map((x) => ((x * 1000) / reps).toFixed(0)).join(' / ');
    results.push({
      bench: ctx.bench,
      algorithm,
      topology: `ideal (p=${ranks})`,
      worldSize: ranks,
      nElem,
      dtype: 'f32',
      ok: true,
      critNs: crit.max_min,
      lines: [
        `  ${algorithm}, p=${ranks}, ${bytes} B per rank: wall per all-reduce, unshared ${per(ms.none)} us, shared ${per(ms.max_min)} us; shared / unshared = ${ratio.toFixed(2)} (median of ${rounds} rounds' ratios)`,
        `  ${algorithm}: crit_ns unshared ${crit.none.toFixed(3)}, shared ${crit.max_min.toFixed(3)}`,
      ],
      extra: { shared_over_unshared: Math.round(ratio * 100) / 100, crit_ns_unshared: crit.none, crit_ns_shared: crit.max_min },
    });
  }
  results[0]?.lines.unshift('  (reproduce: node bin/kernbench.js run --bench link_sharing)');
  return results;
}

// Runs on: main (evaluate) and executor threads (worker, one call per rank).
// Wall-clock cost of shared links (timing.link_sharing: max_min, decisions 0023
// and 0100): the same all-reduces with links not shared, shared (a piece proved alone
// by claims and the launch horizon on its channel's own path, held or arbitrated
// otherwise; decisions 0100 and 0101) and shared with every piece through the
// coordinator's link arbiter (timing.link_fast_path: false), in alternating rounds
// of one run, on the ideal ring. Ratios to unshared per mode: the ranks' window of
// the all-reduces (the run that counts), main's whole session and the CPU time; how
// the shared sessions' pieces were timed (alone, held, arbitrated). The virtual times
// are printed too (the ring's are equal: its flows never meet; the tree's differ).
// Wall time is measured here, in a bench, never in a test.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { median } from '../lib/bench/stats.js';
import type { Torch } from '../lib/host/torch.js';
import { addLinkPieces, noLinkPieces } from '../lib/sync/thread-env.js';

const options = (z: Zod) => z.object({
  ranks: z.number().int().min(2).default(8).describe('ranks (SIPs of the ideal ring)'),
  bytes: z.number().int().min(4).default(65536).describe('bytes per rank (f32)'),
  reps: z.number().int().min(1).default(5).describe('all-reduces per timed run'),
  rounds: z.number().int().min(1).default(5).describe('timed rounds (each: unshared, shared, arbitrated), after one warm-up round'),
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

async function evaluate(ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const { ranks, bytes, reps, rounds } = ctx.options;
  const nElem = Math.floor(bytes / 4);
  const results: BenchResult[] = [];
  const MODES = { none: ['timing.link_sharing=none'], shared: ['timing.link_sharing=max_min'], arbitrated: ['timing.link_sharing=max_min', 'timing.link_fast_path=false'] } as const;
  type Mode = keyof typeof MODES;
  const modes = Object.keys(MODES) as Mode[];
  for (const algorithm of ALGORITHMS) {
    const ms = { none: [] as number[], shared: [] as number[], arbitrated: [] as number[] };
    const whole = { none: [] as number[], shared: [] as number[], arbitrated: [] as number[] };
    const cpu = { none: [] as number[], shared: [] as number[], arbitrated: [] as number[] };
    const crit = { none: 0, shared: 0, arbitrated: 0 };
    // Sessions' callback runs with links shared: one a session (user code runs once, decision 0100).
    let sharedCalls = 0;
    // How the shared sessions' pieces were timed, summed over the rounds (alone at once, held then released, through the arbiter).
    let pieces = noLinkPieces();
    for (let r = 0; r <= rounds; r++) {
      for (const mode of modes) {
        const w0 = performance.now();
        const c0 = process.cpuUsage();
        const run = await ctx.session({ topology: 'ideal', algorithm, sets: [...ctx.config.sets, `system.sips.count=${ranks}`, ...MODES[mode]] }, (torch) => {
          if (mode === 'shared') sharedCalls++;
          return torch.multiprocessing.spawn(worker, { args: [nElem, reps], nprocs: ranks });
        });
        const w1 = performance.now();
        const c1 = process.cpuUsage(c0);
        const rs = run.value;
        crit[mode] = Math.max(...rs.map((x) => x.critNs));
        if (mode === 'shared') pieces = addLinkPieces(pieces, run.report.linkPieces);
        // Round 0 warms up (modules, JIT) and is not counted.
        if (r > 0) {
          ms[mode].push(Math.max(...rs.map((x) => x.t1)) - Math.min(...rs.map((x) => x.t0)));
          whole[mode].push(w1 - w0);
          // CPU time of every thread of the process (user + system): less blurred by the host's load than wall time.
          cpu[mode].push(c1.user + c1.system);
        }
      }
    }
    const ratio = (m: Mode, xs: typeof ms): number => median(xs[m].map((s, i) => s / xs.none[i]));
    const per = (xs: number[]): string => xs.map((x) => ((x * 1000) / reps).toFixed(0)).join(' / ');
    results.push({
      bench: ctx.bench,
      algorithm,
      topology: `ideal (p=${ranks})`,
      worldSize: ranks,
      nElem,
      dtype: 'f32',
      ok: true,
      critNs: crit.shared,
      lines: [
        `  ${algorithm}, p=${ranks}, ${bytes} B per rank: wall per all-reduce, unshared ${per(ms.none)} us, shared ${per(ms.shared)} us, arbitrated ${per(ms.arbitrated)} us`,
        `  ${algorithm}: shared / unshared = ${ratio('shared', ms).toFixed(2)} (whole session ${ratio('shared', whole).toFixed(2)}, CPU ${ratio('shared', cpu).toFixed(2)}; callback runs ${sharedCalls} in ${rounds + 1} sessions), arbitrated / unshared = ${ratio('arbitrated', ms).toFixed(2)} (whole session ${ratio('arbitrated', whole).toFixed(2)}, CPU ${ratio('arbitrated', cpu).toFixed(2)}); medians of ${rounds} rounds' ratios`,
        `  ${algorithm}: shared pieces ${pieces.alone} alone at once, ${pieces.released} held then alone, ${pieces.arbitrated} through the arbiter (${pieces.handed} of them held first)`,
        `  ${algorithm}: crit_ns unshared ${crit.none.toFixed(3)}, shared ${crit.shared.toFixed(3)}, arbitrated ${crit.arbitrated.toFixed(3)}`,
      ],
      extra: {
        shared_over_unshared: Math.round(ratio('shared', ms) * 100) / 100,
        shared_over_unshared_session: Math.round(ratio('shared', whole) * 100) / 100,
        shared_over_unshared_cpu: Math.round(ratio('shared', cpu) * 100) / 100,
        arbitrated_over_unshared: Math.round(ratio('arbitrated', ms) * 100) / 100,
        arbitrated_over_unshared_cpu: Math.round(ratio('arbitrated', cpu) * 100) / 100,
        arbitrated_over_unshared_session: Math.round(ratio('arbitrated', whole) * 100) / 100,
        shared_callback_runs: sharedCalls,
        shared_pieces_alone: pieces.alone,
        shared_pieces_released: pieces.released,
        shared_pieces_arbitrated: pieces.arbitrated,
        shared_pieces_handed: pieces.handed,
        crit_ns_unshared: crit.none,
        crit_ns_shared: crit.shared,
        crit_ns_arbitrated: crit.arbitrated,
      },
    });
  }
  results[0]?.lines.unshift('  (reproduce: node bin/kernbench.js run --bench link_sharing)');
  return results;
}

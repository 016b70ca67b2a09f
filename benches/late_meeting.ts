// Runs on: main (evaluate) and executor threads (worker, one call per rank).
// Wall-clock cost of a late meeting on shared links (issue 23 item 5, decisions
// 0075 and 0100): `steps` ring all-reduces whose flows never meet, then one step
// where two flows do (SIP 0 broadcasts to SIP 3 over three hops while SIP 1
// broadcasts to SIP 2 over one, both crossing the link 1 -> 2 at once). The same
// session runs with the default (pieces proved alone by claims, the others
// arbitrated) and arbitrated from the start (timing.link_fast_path: false), in
// alternating rounds of one run; the ratio of their whole-session wall times is
// the cost of meeting late. Every session's callback counts its invocations (user
// code runs once), and the virtual times are printed (equal in both modes). Wall
// time is measured here, in a bench, never in a test.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { median } from '../lib/bench/stats.js';
import type { Torch } from '../lib/host/torch.js';

const options = (z: Zod) => z.object({
  ranks: z.number().int().min(4).default(32).describe('ranks (SIPs of the ideal ring)'),
  bytes: z.number().int().min(16).default(16384).describe('bytes per rank (f32), for the all-reduces and the meeting broadcasts'),
  meetBytes: z.number().int().min(16).default(1048576).describe('bytes of each meeting broadcast (f32): above 2 alpha beta (200 KB on the ideal ring) the two flows are on the link 1 -> 2 at once; below it the 1-hop flow has left before the 3-hop flow enters'),
  steps: z.number().int().min(0).default(60).describe('quiet steps (ring all-reduces) before the meeting step'),
  rounds: z.number().int().min(1).default(3).describe('timed rounds (each: shared, arbitrated), after one warm-up round'),
});

export default defineBench({
  description: 'wall time of a session whose flows meet only in its last step, the default shared links against arbitrated from the start',
  options,
  evaluate,
});

/** Rank `rank`'s program: `steps` all-reduces of `nElem`, then the meeting step (broadcasts of `meetElem`); returns its last critNs. */
export async function worker(rank: number, nElem: number, steps: number, meetElem: number, torch: Torch): Promise<number> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([1, nElem], { dtype: 'f32' });
  let critNs = 0;
  for (let i = 0; i < steps; i++) critNs = (await torch.distributed.allReduce(t, { op: 'sum' })).critNs;
  // Every rank makes both groups (PyTorch's new_group rule); only members broadcast.
  const far = torch.distributed.newGroup([0, 3]);
  const near = torch.distributed.newGroup([1, 2]);
  const b = torch.zeros([meetElem], { dtype: 'f32' });
  if (rank === 0 || rank === 3) critNs = (await torch.distributed.broadcast(b, { src: 0, group: far })).critNs;
  if (rank === 1 || rank === 2) critNs = (await torch.distributed.broadcast(b, { src: 1, group: near })).critNs;
  return critNs;
}

async function evaluate(ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const { ranks, bytes, steps, rounds, meetBytes } = ctx.options;
  const nElem = Math.floor(bytes / 4);
  const MODES = { shared: ['timing.link_sharing=max_min'], arbitrated: ['timing.link_sharing=max_min', 'timing.link_fast_path=false'] } as const;
  type Mode = keyof typeof MODES;
  const wall = { shared: [] as number[], arbitrated: [] as number[] };
  const crit = { shared: 0, arbitrated: 0 };
  const calls = { shared: 0, arbitrated: 0 };
  for (let r = 0; r <= rounds; r++) {
    for (const mode of Object.keys(MODES) as Mode[]) {
      let n = 0;
      const w0 = performance.now();
      const run = await ctx.session({ topology: 'ideal', algorithm: 'ring_allreduce', sets: [...ctx.config.sets, `system.sips.count=${ranks}`, ...MODES[mode]] }, (torch) => {
        n++;
        return torch.multiprocessing.spawn(worker, { args: [nElem, steps, Math.floor(meetBytes / 4)], nprocs: ranks });
      });
      const w1 = performance.now();
      crit[mode] = Math.max(...run.value);
      calls[mode] = Math.max(calls[mode], n);
      // Round 0 warms up (modules, JIT) and is not counted.
      if (r > 0) wall[mode].push(w1 - w0);
    }
  }
  const ratio = median(wall.shared.map((x, i) => x / wall.arbitrated[i]));
  const ms = (xs: number[]): string => xs.map((x) => x.toFixed(0)).join(' / ');
  return [
    {
      bench: ctx.bench,
      algorithm: 'ring_allreduce',
      topology: `ideal (p=${ranks})`,
      worldSize: ranks,
      nElem,
      dtype: 'f32',
      ok: true,
      critNs: crit.shared,
      lines: [
        '  (reproduce: node bin/kernbench.js run --bench late_meeting)',
        `  ${steps} quiet all-reduces, then one meeting step, p=${ranks}, ${bytes} B: whole session shared ${ms(wall.shared)} ms, arbitrated from the start ${ms(wall.arbitrated)} ms`,
        `  late meeting / arbitrated from the start = ${ratio.toFixed(2)} (median of ${rounds} rounds' ratios); the callback ran up to ${calls.shared} time(s) shared, ${calls.arbitrated} arbitrated`,
        `  crit_ns shared ${crit.shared.toFixed(3)}, arbitrated ${crit.arbitrated.toFixed(3)}`,
      ],
      extra: { late_over_arbitrated: Math.round(ratio * 100) / 100, callback_runs_shared: calls.shared, callback_runs_arbitrated: calls.arbitrated, crit_ns_shared: crit.shared, crit_ns_arbitrated: crit.arbitrated },
    },
  ];
}

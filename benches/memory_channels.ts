// Runs on: main (run; the kernels run on the executor of SIP 0, cube 0).
// Wall-clock cost of a shared memory channel access: one PE issues LOADS
// `tl.load`s of a small shard in its cube's HBM (a request to the arbiter,
// lib/coordinator/arbiter.ts), then the same number from its own TCM (private:
// charged locally), in alternating rounds of one session; the ratio HBM/TCM per
// round, and its median, is what issue 14 bounds (at most 3x). A third kernel,
// four PEs of one cube loading from its HBM at once, shows the contended path
// (requests that must wait for another PE's lower bound), per load.
// Wall time is measured here, in a bench, never in a test.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { median } from '../lib/bench/stats.js';
import { DPPolicy } from '../lib/host/dp-policy.js';
import type { Torch } from '../lib/host/torch.js';
import { defineKernel } from '../lib/kernel/define.js';
import type { TensorDesc } from '../lib/shm/tensor-desc.js';

const options = (z: Zod) => z.object({
  loads: z.number().int().min(1).default(4000).describe('tl.loads per kernel (4 000: the launch and wake-ups of a kernel stay a small part of it)'),
  rounds: z.number().int().min(1).default(7).describe('timed rounds (each: HBM, TCM, four PEs on HBM), after one warm-up round'),
});

export default defineBench({
  description: 'wall time of a tl.load from a cube\'s HBM (arbitrated) against one from TCM (private), one PE and four PEs of one cube',
  options,
  run,
});

/** Loads `count` times the PE's shard of `t` (64 f32: the cost is the access, not the bytes). */
export const loadMany = defineKernel(import.meta.url, 'loadMany', async (tl, t: TensorDesc, count: number) => {
  for (let i = 0; i < count; i++) await tl.load(t);
});

const SHARD = 64;

async function timeLaunch(torch: Torch, t: ReturnType<Torch['zeros']>, loads: number): Promise<{ us: number; critNs: number }> {
  const t0 = performance.now();
  const h = torch.launch('load_many', loadMany, t, loads);
  await h;
  return { us: (performance.now() - t0) * 1000, critNs: h.critPs / 1000 };
}

async function run(torch: Torch, ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const { loads, rounds } = ctx.options;
  const hbm = torch.zeros([1, SHARD], { dtype: 'f32', name: 'in_hbm' });
  const tcm = torch.zeros([1, SHARD], { dtype: 'f32', name: 'in_tcm', space: 'tcm' });
  const four = torch.zeros([1, SHARD * 4], { dtype: 'f32', name: 'four_pes', dp: new DPPolicy({ pe: 'column_wise', numPes: 4 }) });
  const ratios: number[] = [];
  const perLoad = { hbm: [] as number[], tcm: [] as number[], four: [] as number[] };
  let crit = { hbm: 0, tcm: 0, four: 0 };
  for (let r = 0; r <= rounds; r++) {
    const a = await timeLaunch(torch, hbm, loads);
    const b = await timeLaunch(torch, tcm, loads);
    const c = await timeLaunch(torch, four, loads);
    crit = { hbm: a.critNs, tcm: b.critNs, four: c.critNs };
    if (r === 0) continue; // warm-up: modules, JIT
    perLoad.hbm.push(a.us / loads);
    perLoad.tcm.push(b.us / loads);
    perLoad.four.push(c.us / (4 * loads));
    ratios.push(a.us / b.us);
  }
  const ratio = median(ratios);
  const lines = [
    `one PE, ${loads} loads a kernel, median of ${rounds} rounds (wall us per load):`,
    `  HBM ${median(perLoad.hbm).toFixed(2)}   TCM ${median(perLoad.tcm).toFixed(2)}   HBM/TCM ${ratio.toFixed(2)} (per round: ${ratios.map((x) => x.toFixed(2)).join(' ')})`,
    `four PEs of one cube on its HBM: ${median(perLoad.four).toFixed(2)} us per load`,
    `virtual: HBM kernel ${crit.hbm.toFixed(3)} ns, TCM kernel ${crit.tcm.toFixed(3)} ns, four PEs ${crit.four.toFixed(3)} ns`,
    `reproduce: node bin/kernbench.js run --bench memory_channels`,
  ];
  return [
    {
      bench: 'memory_channels',
      algorithm: '-',
      topology: ctx.config.topology,
      worldSize: 1,
      nElem: SHARD,
      dtype: 'f32',
      ok: ratio > 0,
      critNs: crit.hbm,
      lines,
      extra: { hbmUsPerLoad: median(perLoad.hbm), tcmUsPerLoad: median(perLoad.tcm), hbmOverTcm: ratio, fourPesUsPerLoad: median(perLoad.four) },
    },
  ];
}

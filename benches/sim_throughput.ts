// Runs on: main (evaluate) and executor threads (worker, one call per rank).
// Simulator speed: ring all-reduce on an ideal ring of p PEs with 64 KiB per
// rank, reported as simulated IPCQ messages per wall-clock second, under the
// reference layout (--threads 1) and one thread per rank (--threads rank).
// Wall time is measured here, in a bench, never in a test.
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import type { Torch } from '../lib/host/torch.js';
import type { ThreadLayout } from '../lib/runtime/plan.js';

export const description = 'simulator speed: ring all-reduce on an ideal ring of 8/64/256 PEs, 64 KiB per rank, IPCQ messages per wall-second under --threads 1 and rank';

const BYTES_PER_RANK = 64 * 1024;
const RING_SIZES = [8, 64, 256];
const LAYOUTS: ThreadLayout[] = [1, 2, 'rank'];

interface RankRun {
  ok: boolean;
  critNs: number;
  /** Wall clock (ms since the epoch) around this rank's all-reduce: set-up and checks are not timed. */
  t0: number;
  t1: number;
}

export async function worker(rank: number, nElem: number, torch: Torch): Promise<RankRun> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([nElem], { dtype: 'f32' });
  await t.copy_(torch.fromArray(new Float32Array(nElem).fill(1)));
  await torch.distributed.barrier();
  const t0 = performance.timeOrigin + performance.now();
  const work = await torch.distributed.allReduce(t, { op: 'sum' });
  const t1 = performance.timeOrigin + performance.now();
  // Ranks may share a thread: no rank checks its result until every rank's all-reduce is timed.
  await torch.distributed.barrier();
  const ws = torch.distributed.getWorldSize();
  const out = await t.numpy();
  return { ok: out.data.every((v) => v === ws), critNs: work.critNs, t0, t1 };
}

export async function evaluate(ctx: BenchContext): Promise<BenchResult[]> {
  const sizes = process.env.KERNBENCH_SIM_SIZES ? process.env.KERNBENCH_SIM_SIZES.split(',').map(Number) : RING_SIZES;
  const results: BenchResult[] = [];
  const nElem = BYTES_PER_RANK / 4;
  for (const p of sizes) {
    const rates: Record<string, number> = {};
    let crit = -1;
    let ok = true;
    const digests = new Set<string>();
    for (const threads of LAYOUTS) {
      // Two identical spawns in one session: the first warms the threads up (modules, JIT), the second is timed.
      const run = await ctx.session({ topology: 'ideal', threads, sets: [...ctx.config.sets, `system.sips.count=${p}`] }, async (torch) => {
        await torch.multiprocessing.spawn(worker, { args: [nElem], nprocs: p });
        return (await torch.multiprocessing.spawn(worker, { args: [nElem], nprocs: p })) as RankRun[];
      });
      const wallMs = Math.max(...run.value.map((r) => r.t1)) - Math.min(...run.value.map((r) => r.t0));
      const messages = run.report.messages / 2;
      ok &&= run.value.every((r) => r.ok);
      crit = Math.max(...run.value.map((r) => r.critNs));
      digests.add(String(crit));
      rates[`threads_${threads}`] = messages / (wallMs / 1000);
      ctx.log(`  p=${p} --threads ${threads}: ${messages} messages in ${wallMs.toFixed(1)} ms = ${(rates[`threads_${threads}`] / 1e3).toFixed(1)} k msgs/s`);
    }
    const same = digests.size === 1;
    results.push({
      bench: ctx.bench,
      algorithm: 'ring_allreduce',
      topology: `ideal (p=${p})`,
      worldSize: p,
      nElem,
      dtype: 'f32',
      ok: ok && same,
      critNs: crit,
      lines: [
        `  p=${p}: ${LAYOUTS.map((l) => `--threads ${l}: ${(rates[`threads_${l}`] / 1e3).toFixed(1)} k msgs/s`).join(', ')}; best/rank = ${(Math.max(...Object.values(rates)) / rates.threads_rank).toFixed(2)}; same crit_ns across layouts: ${same}`,
      ],
      extra: Object.fromEntries(Object.entries(rates).map(([k, v]) => [`${k}_msgs_per_s`, Math.round(v)])),
    });
  }
  results[0]?.lines.unshift('  (reproduce: node bin/kernbench.js run --bench sim_throughput)');
  return results;
}

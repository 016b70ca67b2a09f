// Runs on: main (run) and executor threads (worker, one call per rank). A bench
// module named by path (no shipped bench calls reduce): one torch.distributed
// reduce of --bytes f32 per rank onto rank --root, with the run's reduce module
// (binomial_reduce unless ccl.collectives.reduce.module says otherwise; it
// addresses peers, so the run needs ccl.peer_ranks >= p). Reports crit_ns, the
// latest over the ranks; the SimGrid comparison (compare.mjs --partners) runs it:
//   npm run build && node bin/kernbench.js run --bench scripts/simgrid/reduce_perf.mjs \
//     --topology ideal --set system.sips.topology=single_switch --set system.sips.count=8 \
//     --set ccl.peer_ranks=8 --bytes 65536 [--no-data] --json
import { defineBench } from '../../dist/lib/bench/define.js';

export const options = (z) => z.object({
  bytes: z.number().int().min(4).default(65536).describe('bytes per rank (f32)'),
  root: z.number().int().min(0).default(0).describe('the rank the reduction lands on'),
});

/** Rank `rank` reduces nElem elements of value rank + 1 onto `root`; the root checks the sum unless noData. */
export async function worker(rank, nElem, root, noData, torch) {
  torch.ahbm.setDevice(rank);
  const dist = torch.distributed;
  await dist.initProcessGroup({ backend: 'ahbm' });
  const p = dist.getWorldSize();
  const t = torch.zeros([nElem], { dtype: 'f32' });
  if (!noData) await t.copy_(torch.fromArray(new Array(nElem).fill(rank + 1), { dtype: 'f32' }));
  const work = await dist.reduce(t, { dst: root, op: 'sum' });
  let wrong = 0;
  if (!noData && rank === root) for (const v of (await t.numpy()).data) if (v !== (p * (p + 1)) / 2) wrong++;
  return { critNs: work.critNs, wrong };
}

export default defineBench({
  description: 'one reduce (torch.distributed.reduce) of --bytes f32 per rank onto --root: crit_ns',
  options,
  run: async (torch, ctx) => {
    const ranks = ctx.ccl.world_size ?? torch.spec.system.sips.count;
    const nElem = Math.floor(ctx.options.bytes / 4);
    const noData = ctx.config.noData ?? false;
    const rs = await torch.multiprocessing.spawn(worker, { args: [nElem, ctx.options.root, noData], nprocs: ranks });
    const critNs = Math.max(...rs.map((r) => r.critNs));
    const wrong = rs.reduce((a, r) => a + r.wrong, 0);
    const module = ctx.ccl.collectives?.reduce?.module ?? 'binomial_reduce';
    return [
      {
        bench: ctx.bench,
        algorithm: module,
        topology: torch.topologyName,
        worldSize: ranks,
        nElem,
        dtype: 'f32',
        ok: wrong === 0,
        critNs,
        lines: [`# reduce_perf (virtual time): ${module} on ${torch.topologyName}, ${ranks} ranks, ${nElem * 4} bytes each, root ${ctx.options.root}`, `  crit_ns ${critNs.toFixed(3)}`, noData ? '# not checked (--no-data)' : `# wrong elements: ${wrong} ${wrong === 0 ? 'OK' : 'FAILED'}`],
      },
    ];
  },
});

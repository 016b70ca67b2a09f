// Runs on: main (run) and executor threads (worker, one call per rank).
// One hierarchical all-reduce (docs/algorithms/hierarchical_allreduce.md) with
// several participants per SIP: each rank's tensor is split column_wise over
// --num-cubes cubes x --num-pes PEs (0 = all of them), one shard of --bytes per
// PE, and every shard is a participant, so the per-SIP trees carry real
// traffic (allreduce_perf gives each rank one shard, where the algorithm is a
// ring of gateways). Reports crit_ns (--json: critNs) like allreduce_perf; the
// SimGrid comparison (docs/simgrid.md, scripts/simgrid/compare.mjs) runs it.
//   node bin/kernbench.js run --bench hierarchical_perf --topology ideal \
//     --algorithm hierarchical_allreduce_center --set system.sips.count=2 \
//     --set sip.cube_mesh.w=3 --set sip.cube_mesh.h=2 --bytes 65536 [--no-data] --json
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { DPPolicy } from '../lib/host/dp-policy.js';
import { KernbenchError } from '../lib/errors.js';
import type { Torch } from '../lib/host/torch.js';
import { tabulateF32 } from '../lib/tabulate.js';

export const options = (z: Zod) => z.object({
  bytes: z.number().int().min(4).default(65536).describe('bytes per participant (per shard, f32)'),
  numCubes: z.number().int().min(0).default(0).describe('cubes per SIP holding shards (0: every cube of the SIP)'),
  numPes: z.number().int().min(0).default(0).describe('PEs per cube holding shards (0: every PE of the cube)'),
});

/** Participant (rank, shard)'s element i: small integers, so the f32 sum is exact. */
const input = (rank: number, shards: number, k: number, i: number): number => ((rank * shards + k + i) % 3) + 1;

export async function worker(rank: number, nElem: number, numCubes: number, numPes: number, noData: boolean, torch: Torch): Promise<{ critNs: number; wrong: number }> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const ranks = torch.distributed.getWorldSize();
  const shards = numCubes * numPes;
  const dp = new DPPolicy({ cube: 'column_wise', pe: 'column_wise', numCubes, numPes });
  const t = torch.zeros([1, shards * nElem], { dtype: 'f32', dp, name: 'hier' });
  // --no-data: timing only, nothing to fill or read back.
  if (!noData) await t.copy_(torch.fromArray(tabulateF32(shards * nElem, (j) => input(rank, shards, Math.floor(j / nElem), j % nElem)), { shape: [1, shards * nElem], dtype: 'f32' }));
  const work = await torch.distributed.allReduce(t, { op: 'sum' });
  let wrong = 0;
  if (!noData) {
    // Every shard ends holding the sum over all ranks x shards participants at its element index.
    const want = (i: number): number => {
      let s = 0;
      for (let r = 0; r < ranks; r++) for (let k = 0; k < shards; k++) s += input(r, shards, k, i);
      return s;
    };
    const wants = [want(0), want(1), want(2)];
    const out = (await t.numpy()).data;
    for (let j = 0; j < out.length; j++) if (out[j] !== wants[(j % nElem) % 3]) wrong++;
  }
  return { critNs: work.critNs, wrong };
}

export default defineBench({
  description: 'one hierarchical all-reduce with a shard on several cubes x PEs per SIP (every shard a participant): crit_ns',
  options,
  algorithm: { provides: 'all_reduce', arrangement: 'hierarchical', default: 'hierarchical_allreduce' },
  run,
});

async function run(torch: Torch, ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  const algorithm = ctx.ccl.algorithm;
  const spec = torch.spec;
  const cubes = spec.sip.cube_mesh.w * spec.sip.cube_mesh.h;
  const pes = spec.cube.pe_layout.corners.length * spec.cube.pe_layout.pe_per_corner;
  const numCubes = ctx.options.numCubes || cubes;
  const numPes = ctx.options.numPes || pes;
  if (numCubes > cubes || numPes > pes) throw new KernbenchError('ERR_BENCH_OPTION_UNFIT', `hierarchical_perf: a SIP has ${cubes} cubes of ${pes} PEs, got --num-cubes ${numCubes} --num-pes ${numPes}`);
  const nElem = Math.floor(ctx.options.bytes / 4);
  const ranks = ctx.ccl.world_size ?? spec.system.sips.count;
  const noData = ctx.config.noData ?? false;
  const rs = await torch.multiprocessing.spawn(worker, { args: [nElem, numCubes, numPes, noData], nprocs: ranks });
  const critNs = Math.max(...rs.map((r) => r.critNs));
  const wrong = rs.reduce((a, r) => a + r.wrong, 0);
  const participants = ranks * numCubes * numPes;
  return [
    {
      bench: ctx.bench,
      algorithm,
      topology: torch.topologyName,
      worldSize: participants,
      nElem,
      dtype: 'f32',
      ok: wrong === 0,
      critNs,
      lines: [
        `# hierarchical_perf (virtual time): ${algorithm} on ${torch.topologyName}, ${ranks} SIPs x ${numCubes} cubes x ${numPes} PEs = ${participants} participants, ${nElem * 4} bytes each`,
        `  crit_ns ${critNs.toFixed(3)}`,
        noData ? '# not checked (--no-data)' : `# wrong elements: ${wrong} ${wrong === 0 ? 'OK' : 'FAILED'}`,
      ],
      extra: { ranks, numCubes, numPes },
    },
  ];
}

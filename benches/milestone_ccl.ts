// Runs on: main (evaluate) and executor threads (worker, re-exported from
// ccl_allreduce so spawn can find it in this module).
// The seed's milestone harness (ADR-0043/0054): a latency sweep of all-reduce
// over n_elem on ring_1d (6 SIPs), torus_2d 2x3 and mesh_2d_no_wrap 2x3, and a
// buffer-kind sweep (tcm/sram/hbm) on torus_2d 3x2, all through the public
// spawn -> initProcessGroup -> allReduce path. Writes summary.csv, one latency
// plot per topology, the buffer-kind plot and topology diagrams (SVG) into
// milestone_ccl/ under --out (default ./out, in the current folder).
// --fast reuses cached points. The plots need the optional packages
// vega and vega-lite: checked before the first point runs.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { outputDir, type BenchContext, type BenchResult } from '../lib/bench/contract.js';
import { defineBench, intList, type OptionsOf, type Zod } from '../lib/bench/define.js';
import { latencyChart, loadPlotting, topologyDiagram } from '../lib/bench/plots.js';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import type { Torch } from '../lib/host/torch.js';
import { Machine } from '../lib/topology/machine.js';
import { worker } from './ccl_allreduce.js';

export { worker };

export const options = (z: Zod) => z.object({
  sizes: intList(z, 1).optional().describe('n_elem values to run, e.g. 8,64 (default: all twelve; the buffer-kind sweep keeps those of its four among them)'),
  fast: z.boolean().default(false).describe('reuse the points cached in out/milestone_ccl/points/ by an earlier run'),
});

export default defineBench({
  description: 'seed milestone harness: all-reduce latency sweep (ring_1d 6, torus 2x3, mesh 2x3) and buffer-kind sweep (torus 3x2) -> milestone_ccl/ under --out (default ./out): summary.csv + SVG plots (needs vega, vega-lite)',
  options,
  table: true,
  evaluate,
});

const N_ELEMS = [8, 32, 64, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 49152];
const LATENCY = [
  { topology: 'ring_1d_6', algorithm: 'ring_allreduce' },
  { topology: 'torus_2d_2x3', algorithm: 'mesh_allreduce' },
  { topology: 'mesh_2d_2x3', algorithm: 'mesh_allreduce_no_wrap' },
];
const BUFFER = { topology: 'torus_2d_3x2', algorithm: 'mesh_allreduce', nElems: [64, 1024, 8192, 49152], kinds: ['tcm', 'sram', 'hbm'] };

interface Point {
  topology: string;
  algorithm: string;
  bufferKind: string;
  nElem: number;
  worldSize: number;
  critNs: number;
  ok: boolean;
  digest: string;
}

async function evaluate(ctx: BenchContext<OptionsOf<typeof options>>): Promise<BenchResult[]> {
  await loadPlotting();
  const OUT_DIR = outputDir(ctx.config, 'milestone_ccl');
  const sizes = ctx.options.sizes ?? N_ELEMS;
  const { fast } = ctx.options;
  const pointsDir = join(OUT_DIR, 'points');
  mkdirSync(pointsDir, { recursive: true });
  const plan = [
    ...LATENCY.flatMap((l) => sizes.map((nElem) => ({ ...l, bufferKind: 'tcm', nElem }))),
    ...BUFFER.kinds.flatMap((bufferKind) => BUFFER.nElems.filter((n) => sizes.includes(n)).map((nElem) => ({ topology: BUFFER.topology, algorithm: BUFFER.algorithm, bufferKind, nElem }))),
  ];
  const tty = process.stderr.isTTY === true;
  const points: Point[] = [];
  let cached = 0;
  for (const [i, p] of plan.entries()) {
    const key = `${p.topology}-${p.algorithm}-${p.bufferKind}-${p.nElem}-${ctx.config.noData ? 'nodata' : 'data'}`;
    const file = join(pointsDir, `${key}.json`);
    // \x1b[K erases the rest of the line: no characters of a longer earlier line stay behind.
    if (tty) process.stderr.write(`\r\x1b[K  [${i + 1}/${plan.length}] ${p.topology} ${p.algorithm} ${p.bufferKind} n_elem=${p.nElem}`);
    if (fast && existsSync(file)) {
      points.push(JSON.parse(readFileSync(file, 'utf8')) as Point);
      cached++;
      continue;
    }
    const ws = loadTopology(topologyPath(p.topology)).system.sips.count;
    const run = await ctx.session(
      { topology: p.topology, algorithm: p.algorithm, sets: [`ccl.n_elem=${p.nElem}`, `ccl.buffer_kind=${p.bufferKind}`] },
      (torch: Torch) => torch.multiprocessing.spawn(worker, { args: [ws, p.nElem, 'f16', ctx.config.noData ?? false], nprocs: ws }),
    );
    const point: Point = { ...p, worldSize: ws, critNs: Math.max(...run.value.map((r) => r.critNs)), ok: run.value.every((r) => r.wrong === 0), digest: run.digest };
    writeFileSync(file, `${JSON.stringify(point)}\n`);
    points.push(point);
  }
  if (tty) process.stderr.write('\r\x1b[K');

  const csv = ['topology,algorithm,buffer_kind,n_elem,world_size,crit_ns,ok,digest', ...points.map((p) => [p.topology, p.algorithm, p.bufferKind, p.nElem, p.worldSize, p.critNs, p.ok, p.digest].join(','))];
  writeFileSync(join(OUT_DIR, 'summary.csv'), `${csv.join('\n')}\n`);
  const files = ['summary.csv'];
  for (const l of LATENCY) {
    const name = `latency_${l.topology}.svg`;
    const pts = points.filter((p) => p.topology === l.topology && p.bufferKind === 'tcm').map((p) => ({ nElem: p.nElem, critNs: p.critNs, series: p.algorithm }));
    writeFileSync(join(OUT_DIR, name), await latencyChart(`all-reduce latency on ${l.topology} (${l.algorithm}, f16)`, pts));
    files.push(name);
  }
  const bk = points.filter((p) => p.topology === BUFFER.topology).map((p) => ({ nElem: p.nElem, critNs: p.critNs, series: `buffer_kind=${p.bufferKind}` }));
  writeFileSync(join(OUT_DIR, 'buffer_kind.svg'), await latencyChart(`IPCQ buffer kind on ${BUFFER.topology} (${BUFFER.algorithm})`, bk));
  files.push('buffer_kind.svg');
  for (const topo of [...new Set([...LATENCY.map((l) => l.topology), BUFFER.topology])]) {
    const name = `topology_${topo}.svg`;
    writeFileSync(join(OUT_DIR, name), await topologyDiagram(topo, new Machine(loadTopology(topologyPath(topo)))));
    files.push(name);
  }

  const ok = points.every((p) => p.ok);
  return [
    {
      bench: ctx.bench,
      algorithm: LATENCY.map((l) => l.algorithm).join('+'),
      topology: 'sweep',
      worldSize: 6,
      nElem: Math.max(...sizes),
      dtype: 'f16',
      ok,
      critNs: Math.max(...points.map((p) => p.critNs)),
      lines: [
        `  ${points.length} points (${cached} from cache), ${points.filter((p) => !p.ok).length} wrong; wrote ${files.join(', ')} to ${OUT_DIR}`,
        ...LATENCY.map((l) => `  ${l.topology.padEnd(14)} ${l.algorithm.padEnd(24)} ${points.filter((p) => p.topology === l.topology).map((p) => `${p.nElem}:${p.critNs.toFixed(0)}`).join(' ')}`),
        `  ${BUFFER.topology.padEnd(14)} buffer kinds: ${BUFFER.kinds.map((k) => `${k} ${points.filter((p) => p.topology === BUFFER.topology && p.bufferKind === k).map((p) => p.critNs.toFixed(0)).join('/')}`).join('; ')}`,
      ],
      outputs: [Float64Array.from(points.map((p) => p.critNs))],
      table: { columns: csv[0].split(','), rows: csv.slice(1).map((r) => r.split(',')) },
    },
  ];
}

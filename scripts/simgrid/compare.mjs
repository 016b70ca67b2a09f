// Runs on: main (a script). The SimGrid comparison of docs/simgrid.md:
//   npm run build && node scripts/simgrid/compare.mjs [--quick]
// Builds the oracle (scripts/simgrid/oracle.cpp, libsimgrid-dev 3.32) into
// out/simgrid/, then for each case runs SimGrid (CM02, no TCP-gamma bound, no
// cross traffic: a message = latency + size / bandwidth share) on the platform
// and message program of scripts/simgrid/gen.mjs, and kernbench's
// allreduce_perf on the same machine (topologies/ideal.yaml: alpha 1000 ns,
// beta 100 GB/s, everything else free), and prints one table: SimGrid time,
// kernbench time, (kernbench - SimGrid) / SimGrid.
// IPCQ window: ccl.n_slots=17 slots of 64 KiB, so a whole 1 MiB message fits
// and credits never hold a piece back, even on a tree edge of many hops (the
// comparison is about links, not the credit protocol).
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const outDir = join(root, 'out/simgrid');
mkdirSync(outDir, { recursive: true });
const oracle = join(outDir, 'oracle');
const flags = execFileSync('pkg-config', ['--cflags', '--libs', 'simgrid'], { encoding: 'utf8' }).trim().split(/\s+/).filter(Boolean);
execFileSync('g++', ['-O2', '-std=c++17', join(root, 'scripts/simgrid/oracle.cpp'), '-o', oracle, ...flags], { stdio: 'inherit' });

const quick = process.argv.includes('--quick');
const SIZES = [65536, 1048576];
const RING_P = quick ? [5, 8] : [5, 8, 16, 32, 64];
const TORUS = quick ? [[4, 2]] : [[4, 2], [4, 4], [8, 4], [8, 8]];
const machines = [
  ...RING_P.map((p) => ({ name: `ring_1d p=${p}`, sets: [`system.sips.count=${p}`] })),
  ...TORUS.map(([w, h]) => ({ name: `torus_2d ${w}x${h}`, sets: ['system.sips.topology=torus_2d', `system.sips.count=${w * h}`, `system.sips.w=${w}`, `system.sips.h=${h}`] })),
];
const ALGOS = ['ring', 'tree'];
const COMMON = ['ccl.n_slots=17'];

function simgrid(sets, algo, bytes) {
  const dir = join(outDir, 'case');
  const setArgs = sets.flatMap((s) => ['--set', s]);
  execFileSync('node', [join(root, 'scripts/simgrid/gen.mjs'), '--topology', 'ideal', ...setArgs, '--algo', algo, '--bytes', String(bytes), '--out', dir]);
  const out = execFileSync(oracle, [join(dir, 'platform.xml'), join(dir, 'program.txt'), '--cfg=network/model:CM02', '--cfg=network/TCP-gamma:0', '--cfg=network/crosstraffic:0', '--cfg=surf/precision:1e-12', '--cfg=maxmin/precision:1e-9', '--log=root.thres:warning'], { encoding: 'utf8' });
  return Number(out.trim().split('\n').pop());
}

function kernbench(sets, algo, bytes, sharing) {
  const setArgs = [...sets, ...COMMON, `timing.link_sharing=${sharing}`].flatMap((s) => ['--set', s]);
  const out = execFileSync('node', [join(root, 'bin/kernbench.js'), 'run', '--bench', 'allreduce_perf', '--topology', 'ideal', '--algorithm', `${algo}_allreduce`, ...setArgs, '--min-bytes', String(bytes), '--max-bytes', String(bytes), '--no-data', '--threads', '1', '--json'], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()).critNs;
}

// kernbench twice: links shared (timing.link_sharing: max_min, the model SimGrid checks) and not (none, the default).
const rows = [['machine', 'algorithm', 'bytes', 'simgrid_ns', 'kernbench_ns', 'rel_diff', 'unshared_ns', 'unshared_diff']];
for (const m of machines) {
  for (const algo of ALGOS) {
    for (const bytes of SIZES) {
      const s = simgrid(m.sets, algo, bytes);
      const k = kernbench(m.sets, algo, bytes, 'max_min');
      const u = kernbench(m.sets, algo, bytes, 'none');
      rows.push([m.name, algo, String(bytes), s.toFixed(3), k.toFixed(3), ((k - s) / s).toExponential(2), u.toFixed(3), ((u - s) / s).toExponential(2)]);
      process.stderr.write('.');
    }
  }
}
process.stderr.write('\n');
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
for (const r of rows) console.log(r.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));

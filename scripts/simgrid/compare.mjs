// Runs on: main (a script). The SimGrid comparison of docs/simgrid.md:
//   npm run build && node scripts/simgrid/compare.mjs [--quick] [--only ALGO] [--fabrics]
//   node scripts/simgrid/compare.mjs --alltoall [--max-p P] [--quick]
//   node scripts/simgrid/compare.mjs --partners [--only rabenseifner|reduce] [--max-p P] [--quick]
//   node scripts/simgrid/compare.mjs --laws [--only alltoall|rabenseifner|reduce] [--max-p P]
//   --p 128,256 and --sizes 65536,4194304 replace the lists of ranks and sizes;
//   --shared-only skips kernbench's unshared run (its columns print '-'), --simgrid-only
//   both kernbench runs (only simgrid_ns is printed: a check of the oracle alone);
//   --detached runs the oracle's older program (sends detached; oracle.cpp).
// Builds the oracle (scripts/simgrid/oracle.cpp, libsimgrid-dev 3.32) into
// out/simgrid/, then for each case runs SimGrid (CM02, no TCP-gamma bound, no
// cross traffic, an exact max-min solve (network/optim:Full; the default lazy
// update left a 4.6e-5 residue): a message = latency + size / bandwidth share;
// sends timed as kernbench times them, oracle.cpp) on the platform
// and message program of scripts/simgrid/gen.mjs, and kernbench's
// allreduce_perf (hierarchical: benches/hierarchical_perf.ts; --alltoall: alltoall_perf
// with peer channels, the pairwise exchange; --partners: allreduce_perf with
// rabenseifner_allreduce, and scripts/simgrid/reduce_perf.mjs, the binomial reduce) on the same machine (topologies/ideal.yaml: alpha 1000 ns,
// beta 100 GB/s, everything else free), and prints one table: SimGrid time,
// kernbench time, (kernbench - SimGrid) / SimGrid.
// --laws: no SimGrid; kernbench on the fully connected ideal machine (one link per
// ordered pair) against each algorithm's alpha-beta law (docs/algorithms/partners.md).
// IPCQ window: ccl.n_slots=17 slots of 64 KiB, so a whole 1 MiB message fits
// and credits never hold a piece back, even on a tree edge of many hops (the
// comparison is about links, not the credit protocol).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadTopology } from '../../dist/lib/config/load.js';
import { topologyPath } from '../../dist/lib/config/paths.js';

const root = new URL('../../', import.meta.url).pathname;
const outDir = join(root, 'out/simgrid');
mkdirSync(outDir, { recursive: true });
const oracle = join(outDir, 'oracle');
const flags = execFileSync('pkg-config', ['--cflags', '--libs', 'simgrid'], { encoding: 'utf8' }).trim().split(/\s+/).filter(Boolean);
const source = join(root, 'scripts/simgrid/oracle.cpp');
// Built again only when the source is newer (runs in parallel share the binary).
if (!existsSync(oracle) || statSync(oracle).mtimeMs < statSync(source).mtimeMs) execFileSync('g++', ['-O2', '-std=c++17', source, '-o', oracle, ...flags], { stdio: 'inherit' });

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
// --fabrics: only the switched fabrics' cases (decision 0050): ring and tree all-reduce
// on single_switch and on fat_tree_2l (4 SIPs a leaf, 2 spines; 1:1 and 2:1 oversubscribed).
const fabricsOnly = argv.includes('--fabrics');
// --alltoall: only the pairwise all-to-all, on single_switch and fat_tree_2l (4 SIPs a
// leaf, 2 spines, 1:1), p = 8 .. --max-p (default 256), 64 KiB .. 4 MiB a rank's send buffer.
const alltoall = argv.includes('--alltoall');
// --partners: Rabenseifner all-reduce and the binomial reduce, on the same fabrics and sizes.
const partners = argv.includes('--partners');
// --laws: all-to-all, Rabenseifner and reduce on fully_connected, against their laws.
const laws = argv.includes('--laws');
const value = (flag) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : null);
const list = (flag) => value(flag)?.split(',').map(Number) ?? null;
const maxP = Number(value('--max-p') ?? 256);
const only = value('--only');
const ALGOS = alltoall ? ['alltoall'] : partners ? ['rabenseifner', 'reduce'] : laws ? ['alltoall', 'rabenseifner', 'reduce'] : ['ring', 'tree', 'hierarchical'];
if (only !== null && !ALGOS.includes(only)) throw new Error(`--only: expected ${ALGOS.join(', ')}, got ${only}`);
const simgridOnly = argv.includes('--simgrid-only');
const sharedOnly = simgridOnly || argv.includes('--shared-only');
const detached = argv.includes('--detached');
const wide = alltoall || partners || laws;
const SIZES = list('--sizes') ?? (wide ? (quick ? [65536, 4194304] : [65536, 262144, 1048576, 4194304]) : [65536, 1048576]);
const RING_P = quick ? [5, 8] : [5, 8, 16, 32, 64];
const TORUS = quick ? [[4, 2]] : [[4, 2], [4, 4], [8, 4], [8, 8]];
const SWITCH_P = quick ? [8] : [8, 16, 32];
const FAT_TREE = quick ? [[16, 2]] : [[8, 1], [16, 1], [16, 2], [32, 4]]; // [p, oversubscription]
const fabrics = [
  ...SWITCH_P.map((p) => ({ name: `single_switch p=${p}`, sets: ['system.sips.topology=single_switch', `system.sips.count=${p}`] })),
  ...FAT_TREE.map(([p, o]) => ({
    name: `fat_tree_2l p=${p} o=${o}`,
    sets: ['system.sips.topology=fat_tree_2l', `system.sips.count=${p}`, 'system.sips.params.sips_per_leaf=4', 'system.sips.params.spines=2', `system.sips.params.oversubscription=${o}`],
  })),
];
const machines = fabricsOnly
  ? fabrics
  : [
      ...RING_P.map((p) => ({ name: `ring_1d p=${p}`, sets: [`system.sips.count=${p}`] })),
      ...TORUS.map(([w, h]) => ({ name: `torus_2d ${w}x${h}`, sets: ['system.sips.topology=torus_2d', `system.sips.count=${w * h}`, `system.sips.w=${w}`, `system.sips.h=${h}`] })),
      ...fabrics,
    ];
const COMMON = ['ccl.n_slots=17'];

// Hierarchical cases (benches/hierarchical_perf.ts: every PE of every cube holds a
// shard of N bytes and is a participant; gateways on a ring_1d of s SIPs).
// Machine "s=S WxHxP [c]": S SIPs, a WxH cube mesh per SIP, P PEs per cube, c = centre root.
//   1x1x1     one PE per SIP: only the ring of gateways (= ring_allreduce at p = S).
//   2x2x2, 3x1x2   corner root: every tree edge within one cube hop, each cube's link
//             to its parent used by its leader alone: no two flows on a link (uncontended).
//   3x2x1 c   the overlapping case. Root cube 1; the gateway spends east/west on the SIP
//             ring and north/south on cubes 0 and 2, so cube 4 (one hop below it) hangs
//             under cube 0, two hops (4 -> 3 -> 0), and its tile shares link 3 -> 0 with
//             cube 3's (one hop); both are leaves and send at t = 0, on the critical path.
//   4x2x1 c   the same overlap (cubes 5 and 4 on link 4 -> 0), off the critical path
//             (cube 2's subtree, three levels deep, is slower).
//   3x3x1 c   cubes 5 and 7 both reach cube 1 over link 4 -> 1, two hops each, but cube 5
//             sends only once cube 8's tile is in: the flows never meet in time.
const hier = (s, w, h, pes, root) => ({
  name: `hier s=${s} ${w}x${h}x${pes}${root === 'center' ? ' c' : ''}`,
  sets: [`system.sips.count=${s}`, `sip.cube_mesh.w=${w}`, `sip.cube_mesh.h=${h}`, `cube.pe_layout.pe_per_corner=${pes}`],
  root,
});
const HIER = quick
  ? [hier(4, 1, 1, 1, 'corner'), hier(2, 2, 2, 2, 'corner'), hier(2, 3, 2, 1, 'center')]
  : [hier(4, 1, 1, 1, 'corner'), hier(2, 2, 2, 2, 'corner'), hier(3, 3, 1, 2, 'corner'), hier(2, 3, 2, 1, 'center'), hier(4, 3, 2, 1, 'center'), hier(3, 4, 2, 1, 'center'), hier(2, 3, 3, 1, 'center')];

const A2A_P = list('--p') ?? [8, 16, 32, 64, 128, 256].filter((p) => p <= maxP && (!quick || p <= 16));
// Peer channels for the world: the all-to-all and the binomial reduce need them set (decision 0105).
const a2aMachines = A2A_P.flatMap((p) => [
  { name: `single_switch p=${p}`, sets: ['system.sips.topology=single_switch', `system.sips.count=${p}`, `ccl.peer_ranks=${p}`] },
  { name: `fat_tree_2l p=${p} o=1`, sets: ['system.sips.topology=fat_tree_2l', `system.sips.count=${p}`, 'system.sips.params.sips_per_leaf=4', 'system.sips.params.spines=2', 'system.sips.params.oversubscription=1', `ccl.peer_ranks=${p}`] },
]);

const lawMachines = A2A_P.map((p) => ({ name: `fully_connected p=${p}`, p, sets: ['system.sips.topology=fully_connected', `system.sips.count=${p}`, `ccl.peer_ranks=${p}`] }));

const cases = [];
const pick = (algo) => only === null || only === algo;
if (alltoall || partners) for (const m of a2aMachines) for (const algo of ALGOS) if (pick(algo)) cases.push({ machine: m.name, sets: m.sets, algo });
if (laws) for (const m of lawMachines) for (const algo of ALGOS) if (pick(algo)) cases.push({ machine: m.name, sets: m.sets, algo, p: m.p });
if (!wide) for (const m of machines) for (const algo of ['ring', 'tree']) if (only === null || only === algo) cases.push({ machine: m.name, sets: m.sets, algo });
if (!wide && !fabricsOnly && (only === null || only === 'hierarchical')) for (const m of HIER) cases.push({ machine: m.name, sets: m.sets, algo: 'hierarchical', root: m.root });

function simgrid(c, bytes) {
  const dir = join(outDir, `case-${process.pid}`); // one per run: runs may go in parallel
  const setArgs = c.sets.flatMap((s) => ['--set', s]);
  const extra = c.algo === 'hierarchical' ? ['--root', c.root] : [];
  execFileSync('node', [join(root, 'scripts/simgrid/gen.mjs'), '--topology', 'ideal', ...setArgs, '--algo', c.algo, ...extra, '--bytes', String(bytes), '--out', dir]);
  const out = execFileSync(oracle, [join(dir, 'platform.xml'), join(dir, 'program.txt'), ...(detached ? ['detached'] : []), '--cfg=network/model:CM02', '--cfg=network/optim:Full', '--cfg=network/TCP-gamma:0', '--cfg=network/crosstraffic:0', '--cfg=surf/precision:1e-12', '--cfg=maxmin/precision:1e-9', '--log=root.thres:warning'], { encoding: 'utf8' });
  return Number(out.trim().split('\n').pop());
}

function kernbench(c, bytes, sharing) {
  const setArgs = [...c.sets, ...COMMON, `timing.link_sharing=${sharing}`].flatMap((s) => ['--set', s]);
  const bench =
    c.algo === 'hierarchical'
      ? ['--bench', 'hierarchical_perf', '--algorithm', c.root === 'center' ? 'hierarchical_allreduce_center' : 'hierarchical_allreduce', '--bytes', String(bytes)]
      : c.algo === 'alltoall'
        ? ['--bench', 'alltoall_perf', '--min-bytes', String(bytes), '--max-bytes', String(bytes)]
        : c.algo === 'reduce'
          ? ['--bench', join(root, 'scripts/simgrid/reduce_perf.mjs'), '--bytes', String(bytes)]
          : ['--bench', 'allreduce_perf', '--algorithm', `${c.algo}_allreduce`, '--min-bytes', String(bytes), '--max-bytes', String(bytes)];
  // --json carries the run's statistics: several MiB at p = 128 and more (the default 1 MiB buffer kills the run).
  const r = spawnSync('node', [join(root, 'bin/kernbench.js'), 'run', ...bench, '--topology', 'ideal', ...setArgs, '--no-data', '--threads', '1', '--json'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`kernbench exited ${r.status} (${r.signal ?? r.error ?? ''}): ${r.stderr}`);
  // Shared links run optimistically; a run whose flows met ran again arbitrated and says so on stderr (decision 0030).
  return { critNs: JSON.parse(r.stdout.trim().split('\n').pop()).critNs, replayed: /^note: flows met on a shared link/m.test(r.stderr) };
}

// The alpha-beta laws on a fully connected fabric (docs/algorithms/partners.md), N
// bytes per rank (all-to-all: the whole send buffer, p blocks), from the ideal
// machine's one link class: alpha its latency, beta its bandwidth (GB/s = bytes per ns).
const ideal = loadTopology(topologyPath('ideal'));
const alpha = ideal.timing.links.sip_sip.latency_ns;
const b = (bytes) => bytes / ideal.timing.links.sip_sip.bandwidth_gb_s;
const LAWS = {
  alltoall: (p, N) => (p - 1) * (alpha + b(N / p)),
  rabenseifner: (p, N) => 2 * Math.log2(p) * alpha + 2 * ((p - 1) / p) * b(N),
  reduce: (p, N) => Math.log2(p) * (alpha + b(N)),
};

// kernbench twice: links shared (timing.link_sharing: max_min, the model SimGrid checks) and not (none).
const rows = [['machine', 'algorithm', 'bytes', laws ? 'law_ns' : 'simgrid_ns', 'kernbench_ns', 'rel_diff', 'replayed', 'unshared_ns', 'unshared_diff']];
for (const c of cases) {
  for (const bytes of SIZES) {
    const s = laws ? LAWS[c.algo](c.p, bytes) : simgrid(c, bytes);
    const { critNs: k, replayed } = simgridOnly ? { critNs: null, replayed: null } : kernbench(c, bytes, 'max_min');
    const u = sharedOnly ? null : kernbench(c, bytes, 'none').critNs;
    const diff = (x) => (x === null ? '-' : ((x - s) / s).toExponential(2));
    rows.push([c.machine, c.algo, String(bytes), s.toFixed(3), k === null ? '-' : k.toFixed(3), diff(k), replayed === null ? '-' : replayed ? 'yes' : 'no', u === null ? '-' : u.toFixed(3), diff(u)]);
    // Each row as it comes, on stderr, so a long run that is stopped still says what it found.
    process.stderr.write(`${rows[rows.length - 1].join(' ')}\n`);
  }
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
for (const r of rows) console.log(r.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));

// Runs on: main (a script, node scripts/simgrid/gen.mjs; needs `npm run build`).
// Writes the SimGrid platform and the message program of one kernbench
// all-reduce, for the oracle (scripts/simgrid/oracle.cpp, docs/simgrid.md):
//   node scripts/simgrid/gen.mjs --topology ideal --set k=v ... --algo ring|tree --bytes N --out DIR
//   node scripts/simgrid/gen.mjs ... --algo hierarchical [--root corner|center]
//                                    [--num-cubes C] [--num-pes P] --bytes N --out DIR
//   node scripts/simgrid/gen.mjs ... --algo alltoall --bytes N --out DIR
//                  (N: a rank's whole send buffer, as alltoall_perf's size column)
//   node scripts/simgrid/gen.mjs ... --algo rabenseifner|reduce --bytes N --out DIR
//                  (p a power of two; reduce: binomial, onto rank 0)
// Participants (one SimGrid host each, r<i> for CCL rank i):
//   ring, tree,    rank r = SIP r's first PE (allreduce_perf, alltoall_perf,
//   alltoall,      scripts/simgrid/reduce_perf.mjs: one shard per rank);
//   rabenseifner,
//   reduce
//   hierarchical   every shard PE of every SIP (benches/hierarchical_perf.ts: a
//                  tensor split column_wise over C cubes x P PEs, 0 = all), rank
//                  q * L + local as lib/ccl/placement.ts numbers them, wired by
//                  lib/ccl/hierarchy.ts's hierarchyPlan (the kernel's own plan).
// Platform: one SimGrid link per directed kernbench link (lib/topology/links.ts)
// with its class's latency and its bandwidth (Links.bandwidthOf: a fat tree's
// leaf-spine links are scaled), and a route for every pair that exchanges a
// message, declared explicitly as kernbench's Links.route, so SimGrid's flows
// cross exactly the links kernbench's would (CM02 shares them). A switched
// fabric's switches are not hosts: a route through one is just its links.
// Program: the message pattern of lib/ccl/algorithms/<algo>_allreduce.ts, of
// the pairwise all-to-all (lib/ccl/collectives/all_to_all_pairwise.ts) or of
// lib/ccl/algorithms/binomial_reduce.ts (one message per tl.send, its whole
// payload; f32 elements, chunks cut as lib/ccl/steps.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hierarchyPlan } from '../../dist/lib/ccl/hierarchy.js';
import { topologyPath } from '../../dist/lib/config/paths.js';
import { loadTopologyWithKind } from '../../dist/lib/loader/topology-kind.js';
import { Links } from '../../dist/lib/topology/links.js';
import { Machine } from '../../dist/lib/topology/machine.js';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const sets = args.flatMap((a, i) => (a === '--set' ? [args[i + 1]] : []));
const topo = await loadTopologyWithKind(topologyPath(opt('topology', 'ideal')), sets);
const m = new Machine(topo);
const links = new Links(m);
const algo = opt('algo', 'ring');
const bytes = Number(opt('bytes', '65536'));
const out = opt('out', '.');
const p = m.sips;
const host = (r) => `r${r}`;
const n = bytes / 4; // f32 elements
/** Chunk i of n elements cut in k (lib/ccl/steps.ts Chunks.count). */
const chunk = (k, i) => Math.floor(((i + 1) * n) / k) - Math.floor((i * n) / k);
const mod = (a, k) => ((a % k) + k) % k;

// Participants: the kernbench PE of each CCL rank.
let pes;
let hier = null;
if (['ring', 'tree', 'alltoall', 'rabenseifner', 'reduce'].includes(algo)) {
  // The partner modules fold a world that is not a power of two first (lib/ccl/partners.ts Fold); not written here.
  if ((algo === 'rabenseifner' || algo === 'reduce') && (p & (p - 1)) !== 0) throw new Error(`--algo ${algo}: p must be a power of two, got ${p}`);
  pes = Array.from({ length: p }, (_, r) => r * m.pesPerSip);
} else if (algo === 'hierarchical') {
  const numCubes = Number(opt('num-cubes', '0')) || m.cubesPerSip;
  const numPes = Number(opt('num-pes', '0')) || m.pesPerCube;
  const root = opt('root', 'corner');
  if (numCubes > m.cubesPerSip || numPes > m.pesPerCube) throw new Error(`--num-cubes/--num-pes: a SIP has ${m.cubesPerSip} cubes of ${m.pesPerCube} PEs, got ${numCubes} x ${numPes}`);
  // Shards cube-major, then PE (DPPolicy.place).
  const shards = [];
  for (let c = 0; c < numCubes; c++) for (let e = 0; e < numPes; e++) shards.push({ cube: c, pe: e });
  const levels = { cubeOf: shards.map((s) => s.cube), cubeMesh: { ...m.cubeMesh }, root };
  hier = { L: shards.length, plan: hierarchyPlan(levels, p) };
  pes = [];
  for (let q = 0; q < p; q++) for (const s of shards) pes.push(m.peId({ sip: q, cube: s.cube, pe: s.pe }));
} else {
  throw new Error(`--algo: expected ring, tree, hierarchical, alltoall, rabenseifner or reduce, got ${algo}`);
}

// Program.
const lines = [];
const pairs = new Set();
let h = 0;
const isend = (r, to, b) => (pairs.add(`${r} ${to}`), lines.push(`${host(r)} isend ${++h} ${host(to)} ${b}`), h);
const irecv = (r, from) => (lines.push(`${host(r)} irecv ${++h} ${host(from)}`), h);
const wait = (r, x) => lines.push(`${host(r)} wait ${x}`);
/** ringAllReduce (lib/ccl/steps.ts) for rank `me` at position `pos` of a ring of k. */
const ring = (me, pos, k, east, west) => {
  for (const shift of [0, 1]) { // reduce-scatter sends chunk pos - s, all-gather chunk pos + 1 - s
    for (let s = 0; s < k - 1; s++) {
      const sent = isend(me, east, 4 * chunk(k, mod(pos - s + shift, k)));
      wait(me, irecv(me, west));
      wait(me, sent);
    }
  }
};
if (algo === 'ring') {
  for (let r = 0; r < p; r++) ring(r, r, p, mod(r + 1, p), mod(r - 1, p));
} else if (algo === 'tree') {
  for (let r = 0; r < p; r++) {
    const children = [2 * r + 1, 2 * r + 2].filter((c) => c < p);
    const incoming = children.map((c) => irecv(r, c));
    incoming.forEach((x) => wait(r, x));
    if (r > 0) {
      const parent = (r - 1) >> 1;
      const sent = isend(r, parent, bytes);
      wait(r, irecv(r, parent));
      wait(r, sent);
    }
    const sends = children.map((c) => isend(r, c, bytes));
    sends.forEach((x) => wait(r, x));
  }
} else if (algo === 'alltoall') {
  // The pairwise exchange: step s sends the block for r + s (in the background),
  // waits for r - s's block, then for its own send. alltoall_perf's count is
  // floor(N / 4 / p) * p elements (at least p), so a block is floor(N / 4 / p) of them.
  const block = 4 * Math.max(1, Math.floor(n / p));
  for (let r = 0; r < p; r++) {
    for (let s = 1; s < p; s++) {
      const sent = isend(r, mod(r + s, p), block);
      wait(r, irecv(r, mod(r - s, p)));
      wait(r, sent);
    }
  }
} else if (algo === 'rabenseifner') {
  // lib/ccl/algorithms/rabenseifner_allreduce.ts: the tile cut in p chunks;
  // recursive halving (d = p/2 .. 1: send the half window given up, receive and
  // reduce the half kept), then recursive doubling (d = 1 .. p/2: send the window
  // held, receive the partner's). Each step waits for its receive, then its send;
  // an empty window is neither sent nor received.
  const lo = (i) => Math.floor((i * n) / p);
  const span = (a, b) => 4 * (lo(b) - lo(a));
  const step = (v, partner, give, take) => {
    const sent = give > 0 ? isend(v, partner, give) : null;
    if (take > 0) wait(v, irecv(v, partner));
    if (sent !== null) wait(v, sent);
  };
  for (let v = 0; v < p; v++) {
    let [a, b] = [0, p];
    for (let d = p / 2; d >= 1; d /= 2) {
      const mid = a + d;
      const [keepA, keepB, giveA, giveB] = v & d ? [mid, b, a, mid] : [a, mid, mid, b];
      step(v, v ^ d, span(giveA, giveB), span(keepA, keepB));
      [a, b] = [keepA, keepB];
    }
    for (let d = 1; d < p; d *= 2) {
      const [oa, ob] = v & d ? [a - d, a] : [b, b + d];
      step(v, v ^ d, span(a, b), span(oa, ob));
      [a, b] = [Math.min(a, oa), Math.max(b, ob)];
    }
  }
} else if (algo === 'reduce') {
  // lib/ccl/algorithms/binomial_reduce.ts onto rank 0: rank v receives from
  // v + m for every m below its lowest set bit (the root: every m), all posted
  // first and waited in order of m, then sends its whole tile to v - lowbit(v).
  for (let v = 0; v < p; v++) {
    const top = v === 0 ? p : v & -v;
    const incoming = [];
    for (let m = 1; m < top && v + m < p; m *= 2) incoming.push(irecv(v, v + m));
    incoming.forEach((x) => wait(v, x));
    if (v > 0) wait(v, isend(v, v - (v & -v), bytes));
  }
} else {
  // lib/ccl/algorithms/hierarchical_allreduce.ts: whole tiles up and down the
  // SIP's tree, a ring all-reduce of the gateways (chunks of n / p) between.
  const { L, plan } = hier;
  for (let q = 0; q < p; q++) {
    for (let local = 0; local < L; local++) {
      const r = q * L + local;
      const children = plan.children[local].map((c) => q * L + c.local);
      const incoming = children.map((c) => irecv(r, c));
      incoming.forEach((x) => wait(r, x));
      if (local !== plan.gateway) {
        const parent = q * L + plan.parent[local];
        const sent = isend(r, parent, bytes);
        wait(r, irecv(r, parent));
        wait(r, sent);
      } else if (p > 1) {
        ring(r, q, p, mod(q + 1, p) * L + local, mod(q - 1, p) * L + local);
      }
      const sends = children.map((c) => isend(r, c, bytes));
      sends.forEach((x) => wait(r, x));
    }
  }
}

// Platform: hosts, the links the routes use, one route per communicating pair.
mkdirSync(out, { recursive: true });
const used = new Set();
const routes = [...pairs].map((k) => k.split(' ').map(Number)).sort((x, y) => x[0] - y[0] || x[1] - y[1]).map(([a, b]) => {
  const r = links.route(pes[a], pes[b]);
  r.forEach((l) => used.add(l));
  return `<route src="${host(a)}" dst="${host(b)}" symmetrical="NO">${r.map((l) => `<link_ctn id="l${l}"/>`).join('')}</route>`;
});
const linkXml = [...used].sort((x, y) => x - y).map((l) => {
  const c = topo.timing.links[links.classOf(l)];
  return `<link id="l${l}" bandwidth="${links.bandwidthOf(l) * 1e9}Bps" latency="${c.latency_ns * 1e-9}s"/>`;
});
const hosts = pes.map((_, r) => `<host id="${host(r)}" speed="1Gf"/>`);
writeFileSync(join(out, 'platform.xml'), `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="kernbench" routing="Full">
${[...hosts, ...linkXml, ...routes].join('\n')}
</zone>
</platform>
`);
writeFileSync(join(out, 'program.txt'), lines.join('\n') + '\n');

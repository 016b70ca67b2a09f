// Runs on: main (a script, node scripts/simgrid/gen.mjs; needs `npm run build`).
// Writes the SimGrid platform and the message program of one kernbench
// all-reduce, for the oracle (scripts/simgrid/oracle.cpp, docs/simgrid.md):
//   node scripts/simgrid/gen.mjs --topology ideal --set k=v ... --algo ring|tree --bytes N --out DIR
// Platform: one host per CCL rank (rank r = SIP r's first PE), one SimGrid link
// per directed kernbench link (lib/topology/links.ts) with its class's latency and
// bandwidth, and every route declared explicitly as kernbench's Links.route, so
// SimGrid's flows cross exactly the links kernbench's would (CM02 shares them).
// Program: the message pattern of lib/ccl/algorithms/<algo>_allreduce.ts (one
// message per tl.send, its whole payload; f32 elements, chunks cut as lib/ccl/steps.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTopology } from '../../dist/lib/config/load.js';
import { topologyPath } from '../../dist/lib/config/paths.js';
import { Links } from '../../dist/lib/topology/links.js';
import { Machine } from '../../dist/lib/topology/machine.js';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const sets = args.flatMap((a, i) => (a === '--set' ? [args[i + 1]] : []));
const topo = loadTopology(topologyPath(opt('topology', 'ideal')), sets);
const m = new Machine(topo);
const links = new Links(m);
const algo = opt('algo', 'ring');
const bytes = Number(opt('bytes', '65536'));
const out = opt('out', '.');
const p = m.sips;
const pe = (r) => r * m.pesPerSip;
const host = (r) => `r${r}`;

mkdirSync(out, { recursive: true });

// Platform.
const used = new Set();
const routes = [];
for (let a = 0; a < p; a++) for (let b = 0; b < p; b++) {
  if (a === b) continue;
  const r = links.route(pe(a), pe(b));
  r.forEach((l) => used.add(l));
  routes.push(`<route src="${host(a)}" dst="${host(b)}" symmetrical="NO">${r.map((l) => `<link_ctn id="l${l}"/>`).join('')}</route>`);
}
const linkXml = [...used].sort((x, y) => x - y).map((l) => {
  const c = topo.timing.links[links.classOf(l)];
  return `<link id="l${l}" bandwidth="${c.bandwidth_gb_s * 1e9}Bps" latency="${c.latency_ns * 1e-9}s"/>`;
});
const hosts = Array.from({ length: p }, (_, r) => `<host id="${host(r)}" speed="1Gf"/>`);
writeFileSync(join(out, 'platform.xml'), `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="kernbench" routing="Full">
${[...hosts, ...linkXml, ...routes].join('\n')}
</zone>
</platform>
`);

// Program.
const lines = [];
let h = 0;
const isend = (r, to, b) => (lines.push(`${host(r)} isend ${++h} ${host(to)} ${b}`), h);
const irecv = (r, from) => (lines.push(`${host(r)} irecv ${++h} ${host(from)}`), h);
const wait = (r, x) => lines.push(`${host(r)} wait ${x}`);
const n = bytes / 4; // f32 elements
if (algo === 'ring') {
  const count = (i) => Math.floor(((i + 1) * n) / p) - Math.floor((i * n) / p);
  const mod = (a) => ((a % p) + p) % p;
  for (let r = 0; r < p; r++) {
    const east = mod(r + 1), west = mod(r - 1);
    for (const shift of [0, 1]) { // reduce-scatter sends chunk r - s, all-gather chunk r + 1 - s
      for (let s = 0; s < p - 1; s++) {
        const sent = isend(r, east, 4 * count(mod(r - s + shift)));
        wait(r, irecv(r, west));
        wait(r, sent);
      }
    }
  }
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
} else {
  throw new Error(`--algo: expected ring or tree, got ${algo}`);
}
writeFileSync(join(out, 'program.txt'), lines.join('\n') + '\n');

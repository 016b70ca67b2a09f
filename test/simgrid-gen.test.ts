// The SimGrid comparison's message programs (scripts/simgrid/gen.mjs,
// docs/simgrid.md) for the hierarchical all-reduce, checked without SimGrid:
// the program and platform gen.mjs writes must carry the kernel's messages
// (every tile up and down each SIP's tree, the gateways' ring chunks) over
// Links.route, and the comparison's overlapping case must really overlap.
// Also the Rabenseifner all-reduce's and the binomial reduce's programs: each
// rank's partners, bytes and order as the modules send them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

// Compiled to dist/test/: the project root is two levels up.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Case {
  program: string[][];
  routes: Map<string, string[]>;
  hosts: number;
  /** Bandwidth in bytes/s of each declared link. */
  bandwidths: Map<string, number>;
}

/** gen.mjs's output for `--algo hierarchical` (or `algo`) on the ideal machine with `sets`. */
function gen(sets: string[], root: string, bytes: number, algo = 'hierarchical'): Case {
  const dir = mkdtempSync(join(tmpdir(), 'kb-simgrid-'));
  try {
    const env = { ...process.env };
    delete env.NODE_OPTIONS; // tap's process tracking: not needed by the script
    execFileSync('node', [join(ROOT, 'scripts/simgrid/gen.mjs'), '--topology', 'ideal', ...sets.flatMap((s) => ['--set', s]), '--algo', algo, '--root', root, '--bytes', String(bytes), '--out', dir], { env });
    const program = readFileSync(join(dir, 'program.txt'), 'utf8').trim().split('\n').map((l) => l.split(' '));
    const xml = readFileSync(join(dir, 'platform.xml'), 'utf8');
    const routes = new Map<string, string[]>();
    for (const m of xml.matchAll(/<route src="(\w+)" dst="(\w+)"[^>]*>(.*?)<\/route>/g)) routes.set(`${m[1]} ${m[2]}`, [...m[3].matchAll(/id="(\w+)"/g)].map((x) => x[1]));
    const bandwidths = new Map([...xml.matchAll(/<link id="(\w+)" bandwidth="([\d.e+]+)Bps"/g)].map((m) => [m[1], Number(m[2])]));
    return { program, routes, hosts: [...xml.matchAll(/<host /g)].length, bandwidths };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const machine = (s: number, w: number, h: number, pes: number): string[] => [`system.sips.count=${s}`, `sip.cube_mesh.w=${w}`, `sip.cube_mesh.h=${h}`, `cube.pe_layout.pe_per_corner=${pes}`];

t.test('the hierarchical program sends 2(L - 1) tiles per SIP, 2(s - 1) N bytes of ring chunks in all, and every message is received over a declared route', async (t) => {
  const [s, w, h, pes, bytes] = [3, 3, 1, 2, 4000];
  const L = w * h * pes;
  const c = gen(machine(s, w, h, pes), 'corner', bytes);
  const sends = c.program.filter((op) => op[1] === 'isend');
  const recvs = c.program.filter((op) => op[1] === 'irecv');
  const tiles = sends.filter((op) => Number(op[4]) === bytes);
  const chunks = sends.filter((op) => Number(op[4]) < bytes);
  const count = (ops: string[][], key: (op: string[]) => string): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const op of ops) out[key(op)] = (out[key(op)] ?? 0) + 1;
    return out;
  };
  t.same(
    {
      hosts: c.hosts,
      tiles: tiles.length,
      ringBytes: chunks.reduce((a, op) => a + Number(op[4]), 0),
      ringSenders: new Set(chunks.map((op) => op[0])).size,
      unrouted: sends.filter((op) => !c.routes.has(`${op[0]} ${op[3]}`)).length,
    },
    { hosts: s * L, tiles: s * 2 * (L - 1), ringBytes: 2 * (s - 1) * bytes, ringSenders: s, unrouted: 0 },
  );
  // Each (sender, receiver) pair: as many receives posted as messages sent.
  t.same(
    count(recvs, (op) => `${op[3]} ${op[0]}`),
    count(sends, (op) => `${op[0]} ${op[3]}`),
  );
});

t.test('in the 2 SIPs x 3x2 cubes centre-root case, two tree edges into one PE share a link (the overlapping case)', async (t) => {
  const c = gen(machine(2, 3, 2, 1), 'center', 4000);
  const into = new Map<string, string[][]>();
  for (const op of c.program.filter((o) => o[1] === 'isend' && Number(o[4]) === 4000)) {
    const route = c.routes.get(`${op[0]} ${op[3]}`) ?? [];
    into.set(op[3], [...(into.get(op[3]) ?? []), route]);
  }
  const shared = [...into.values()].filter((routes) => routes.some((r, i) => routes.some((q, j) => j > i && r.some((l) => q.includes(l)))));
  t.ok(shared.length > 0, `routes by receiver: ${JSON.stringify([...into])}`);
});

t.test('on a 2:1 fat tree the platform routes a cross-leaf message over 4 links, the middle two (leaf-spine) at half the bandwidth', async (t) => {
  // 8 SIPs, 4 a leaf, 2 spines, oversubscription 4: leaf-spine links at 100 x 4 / (4 x 2) = 50 GB/s.
  const c = gen(['system.sips.topology=fat_tree_2l', 'system.sips.count=8', 'system.sips.params.oversubscription=4'], 'corner', 4000, 'ring');
  const route = (a: number, b: number): number[] => (c.routes.get(`r${a} r${b}`) ?? []).map((l) => (c.bandwidths.get(l) ?? 0) / 1e9);
  t.same([route(3, 4), route(7, 0), route(0, 1)], [[100, 50, 50, 100], [100, 50, 50, 100], [100, 100]]);
});

t.test('the Rabenseifner program: each rank sends 2 log2 p messages to its partners v xor d, 2 (p - 1) / p N bytes in all, each received', async (t) => {
  const [p, bytes] = [8, 4 * 8 * 100];
  const c = gen(['system.sips.topology=single_switch', `system.sips.count=${p}`], 'corner', bytes, 'rabenseifner');
  const sends = c.program.filter((op) => op[1] === 'isend');
  const recvs = c.program.filter((op) => op[1] === 'irecv');
  const rank = (h: string): number => Number(h.slice(1));
  for (let v = 0; v < p; v++) {
    const mine = sends.filter((op) => rank(op[0]) === v);
    // Halving: d = p/2 .. 1, then doubling: d = 1 .. p/2.
    const ds = [4, 2, 1, 1, 2, 4];
    t.same(mine.map((op) => rank(op[3])), ds.map((d) => v ^ d), `rank ${v}'s partners`);
    t.equal(mine.reduce((a, op) => a + Number(op[4]), 0), (2 * (p - 1) * bytes) / p, `rank ${v}'s bytes`);
  }
  t.same(recvs.map((op) => `${op[3]} ${op[0]}`).sort(), sends.map((op) => `${op[0]} ${op[3]}`).sort());
  t.ok(sends.every((op) => c.routes.has(`${op[0]} ${op[3]}`)), 'every pair has its route');
});

t.test('the binomial reduce program: rank v > 0 sends its whole tile once, to v - lowbit(v), after receiving from v + m for each m below lowbit(v)', async (t) => {
  const [p, bytes] = [8, 4000];
  const c = gen(['system.sips.topology=single_switch', `system.sips.count=${p}`], 'corner', bytes, 'reduce');
  const rank = (h: string): number => Number(h.slice(1));
  const sends = c.program.filter((op) => op[1] === 'isend');
  t.same(sends.map((op) => [rank(op[0]), rank(op[3]), Number(op[4])]).sort((a, b) => a[0] - b[0]), [1, 2, 3, 4, 5, 6, 7].map((v) => [v, v - (v & -v), bytes]));
  // Rank 4's program: receives from 5 and 6 first (m = 1, 2), then its send to 0.
  t.same(c.program.filter((op) => op[0] === 'r4').map((op) => op[1] + (op[3] ?? '')), ['irecvr5', 'irecvr6', 'wait', 'wait', 'isendr0', 'wait']);
  t.ok(sends.every((op) => c.routes.has(`${op[0]} ${op[3]}`)), 'every pair has its route');
});

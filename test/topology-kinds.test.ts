// Runs on: main thread (tap). Covers: SIP topology kinds as self-describing
// modules (lib/topology/define-kind.ts, lib/topology/kinds/): the catalog is
// the folder, each kind's hops are the shortest paths over its own neighbour
// links, the topology file's schema takes its names and grid rules from the
// kinds, Machine and the CCL worlds ask the kind, and line_1d (added as one
// kind file plus topologies/line_1d_4.yaml) runs an all-reduce.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { SIP_TOPOLOGIES } from '../lib/config/topology-schema.js';
import { neighbourRank, portsOf } from '../lib/ccl/world.js';
import { ConfigError, KernbenchError } from '../lib/errors.js';
import { defineSipTopology, gridOrProblem, type SipGrid, type SipTopology } from '../lib/topology/define-kind.js';
import { sipKind, sipKindNames, sipKinds } from '../lib/topology/kind-catalog.js';
import { Machine } from '../lib/topology/machine.js';
import { TOPOLOGY_YAML } from './fixtures/topology-text.js';
import { TestRuntime } from './helpers/run.js';

const KINDS_DIR = new URL('../lib/topology/kinds/', import.meta.url);

/** The grids a kind accepts for 6 SIPs (a row of 6, or 2 x 3 / 3 x 2 for a kind that needs w x h). */
function gridsOf(kind: SipTopology): SipGrid[] {
  return [{ count: 6 }, { count: 6, w: 2, h: 3 }, { count: 6, w: 3, h: 2 }]
    .map((s) => gridOrProblem(kind.grid(s)))
    .flatMap((r) => ('grid' in r ? [r.grid] : []));
}

/** Shortest hop counts from `from` over the links the kind's neighbour() gives (breadth first). */
function bfs(kind: SipTopology, grid: SipGrid, from: number): number[] {
  const n = grid.w * grid.h;
  const dist = new Array<number>(n).fill(-1);
  dist[from] = 0;
  const queue = [from];
  while (queue.length > 0) {
    const a = queue.shift() as number;
    for (let d = 0; d < 4; d++) {
      const b = kind.neighbour(a, d, grid);
      if (b >= 0 && dist[b] < 0) {
        dist[b] = dist[a] + 1;
        queue.push(b);
      }
    }
  }
  return dist;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw, got none');
}

t.test('the catalog is the kinds folder: one kind per module file, named after it', async (t) => {
  const files = readdirSync(KINDS_DIR).filter((f) => f.endsWith('.js')).map((f) => f.slice(0, -'.js'.length)).sort();
  t.same(sipKindNames(), files);
  t.same([...SIP_TOPOLOGIES], files, 'the topology schema accepts exactly those names');
  t.ok(files.includes('line_1d'), 'line_1d is shipped');
});

t.test("every direction kind's hops are the shortest paths over its own neighbour links", async (t) => {
  // A switched kind (decision 0050) has no hops of its own: its fabric's routes give them (test/topology-fabrics.test.ts).
  for (const kind of sipKinds().filter((k) => !k.fabric)) {
    const hopsOf = kind.hops;
    if (hopsOf === undefined) throw new Error(`${kind.name}: a kind without a fabric has hops`);
    const grids = gridsOf(kind);
    t.ok(grids.length > 0, `${kind.name} accepts some grid of 6 SIPs`);
    for (const grid of grids) {
      const n = grid.w * grid.h;
      const hops = Array.from({ length: n }, (_, a) => Array.from({ length: n }, (_, b) => hopsOf(a, b, grid)));
      const paths = Array.from({ length: n }, (_, a) => bfs(kind, grid, a));
      t.same(hops, paths, `${kind.name} on ${grid.w} x ${grid.h}`);
    }
  }
});

t.test('line_1d is a ring without the wrap link: its end SIPs are count - 1 hops apart', async (t) => {
  const m = new Machine(loadTopology(topologyPath('line_1d_4')));
  t.equal(m.sipKind, 'line_1d');
  t.same(m.sipGrid, { w: 4, h: 1 });
  const ends = m.route(m.peId({ sip: 0, cube: 0, pe: 0 }), m.peId({ sip: 3, cube: 0, pe: 0 }));
  t.same(ends, { link: 'sip_sip', hops: 3 });
  const ring = sipKind('ring_1d');
  t.equal(ring.hops?.(0, 3, m.sipGrid), 1, 'the same SIPs on a ring are neighbours');
});

t.test('the ranks of a line_1d world have no neighbour past either end', async (t) => {
  const shape = { kind: 'line_1d' as const, w: 4, h: 1 };
  t.same([0, 1, 2, 3].map((r) => [neighbourRank(shape, r, 0), neighbourRank(shape, r, 1)]), [[1, -1], [2, 0], [3, 1], [-1, 2]]);
  const last = portsOf({ ...shape, pes: [10, 11, 12, 13] }, 3);
  t.match(last.send[0], { code: 'ERR_NO_NEIGHBOUR' }, 'the last rank cannot send east');
});

/** TOPOLOGY_YAML with `system.sips` replaced by `sips` (YAML lines under `sips:`), written to a testdir; returns the path and text. */
function withSips(tt: { testdir(content: Record<string, string>): string }, sips: string): { file: string; text: string } {
  const text = TOPOLOGY_YAML.replace(/( *)sips:\n(?:\1  .*\n)+/, (_m, indent: string) => `${indent}sips:\n${sips.split('\n').map((l) => `${indent}  ${l}`).join('\n')}\n`);
  if (text === TOPOLOGY_YAML) throw new Error('fixture has no system.sips');
  return { file: relative(process.cwd(), join(tt.testdir({ 'topo.yaml': text }), 'topo.yaml')), text };
}

function lineCol(text: string, needle: string, shift = 0): { line: number; col: number } {
  const i = text.indexOf(needle);
  const before = text.slice(0, i).split('\n');
  return { line: before.length, col: before[before.length - 1].length + 1 + shift };
}

t.test('an unknown kind in a topology file is ERR_CONFIG at its file:line:col, listing every catalogued kind', async (t) => {
  const { file, text } = withSips(t, 'count: 4\ntopology: chain_1d');
  const err = thrown(() => loadTopology(file));
  t.ok(err instanceof ConfigError);
  const [p, ...rest] = (err as ConfigError).problems;
  t.same(rest, []);
  t.same({ file: p.file, path: p.path, line: p.line, col: p.col }, { file, path: 'system.sips.topology', ...lineCol(text, 'chain_1d') });
  for (const name of sipKindNames()) t.match(p.message, name, `the message lists ${name}`);
});

t.test("a file's grid is checked by its kind's grid rule", async (t) => {
  const line = withSips(t, 'count: 4\ntopology: line_1d\nw: 2\nh: 2');
  const err = thrown(() => loadTopology(line.file)) as ConfigError;
  t.same(err.problems.map((p) => [p.path, p.line]), [['system.sips.w', lineCol(line.text, 'w: 2').line]], 'line_1d takes no w/h');
  t.same(new Machine(loadTopology(withSips(t, 'count: 4\ntopology: line_1d').file)).sipGrid, { w: 4, h: 1 }, 'and lays its SIPs in a row');
});

t.test('defineSipTopology refuses a malformed kind with ERR_MODULE_DEFINITION naming each field', async (t) => {
  const good = sipKind('line_1d');
  for (const [what, def, field] of [
    ['a name without a dimension (it could be a CCL arrangement)', { ...good, name: 'tree' }, 'name'],
    ['a name that is not snake_case', { ...good, name: 'Line_1D' }, 'name'],
    ['a two-line summary', { ...good, summary: 'a\nb' }, 'summary'],
    ['no hops', { ...good, hops: undefined }, 'hops'],
  ] as const) {
    const e = thrown(() => defineSipTopology(def as never));
    t.ok(e instanceof KernbenchError && e.code === 'ERR_MODULE_DEFINITION', what);
    t.match((e as Error).message, `${field}:`, `${what}: names ${field}`);
  }
  t.ok(Object.isFrozen(defineSipTopology({ ...good })), 'a good kind comes back frozen');
});

t.test('mesh_allreduce, whose meta lists line_1d, runs on line_1d_4: every rank holds the exact sum', async (t) => {
  const rt = new TestRuntime();
  t.teardown(() => rt.close());
  const [r] = await rt.bench('ccl_allreduce', { topology: 'line_1d_4', threads: 1, dtype: 'f32', sets: ['ccl.module=mesh_allreduce', 'ccl.topology=line_1d', 'ccl.n_elem=301'] });
  t.same({ ok: r.ok, worldSize: r.worldSize, lines: r.ok ? [] : r.lines }, { ok: true, worldSize: 4, lines: [] });
});

t.test('ring_allreduce, whose meta does not list line_1d, is refused on it before the run', async (t) => {
  const rt = new TestRuntime();
  t.teardown(() => rt.close());
  const e = await rt.bench('ccl_allreduce', { topology: 'line_1d_4', threads: 1, sets: ['ccl.module=ring_allreduce', 'ccl.topology=line_1d'] }).then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(e instanceof ConfigError, 'ERR_CONFIG');
  t.match((e as ConfigError).problems.map((p) => p.path), ['ccl.topology']);
});

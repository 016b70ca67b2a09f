// Runs on: main thread (tap). Covers: a user's own SIP topology kind, named by
// path from their topology file (decision 0050; lib/loader/topology-kind.ts):
// a kind module in TypeScript outside the package, importing only the public
// `kernbench/topology` entry, runs the ring all-reduce like a shipped kind on
// every thread layout (each thread imports it), and a path to no file or to a
// module without a kind is refused before the run.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { topologyPath } from '../lib/config/paths.js';
import { ConfigError, KernbenchError } from '../lib/errors.js';
import { loadTopologyWithKind } from '../lib/loader/topology-kind.js';
import { Machine } from '../lib/topology/machine.js';
import { TestRuntime } from './helpers/run.js';

/** The compiled public entry `kernbench/topology` (this file runs from dist/test/). */
const TOPOLOGY_URL = new URL('../lib/public/topology.js', import.meta.url).href;

/** A crossbar written by a user: the shipped single_switch's links, its own name and numbering (down ports first). */
const MY_CROSSBAR_TS = `import { defineSipTopology, memoRoutes, ringNeighbour, rowGrid, type SipFabric } from '${TOPOLOGY_URL}';

export const kind = defineSipTopology({
  name: 'my_crossbar',
  summary: 'a user crossbar: link s is switch -> SIP s, link n + s is SIP s -> switch',
  grid: (sips) => rowGrid('my_crossbar', sips),
  neighbour: ringNeighbour,
  fabric: (n): SipFabric => ({
    switches: 1,
    linkCount: 2 * n,
    ends: (l) => (l < n ? { from: n, to: l } : { from: l - n, to: n }),
    route: memoRoutes(n, (a, b) => [n + a, b]),
  }),
});
`;

const dir = mkdtempSync(join(tmpdir(), 'kernbench-kind-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
writeFileSync(join(dir, 'my_crossbar.ts'), MY_CROSSBAR_TS);
writeFileSync(join(dir, 'no_kind.mjs'), 'export const kind = 3;\n');
/** ideal.yaml (8 SIPs, alpha-beta) with system.sips.topology set to `kind` as written. */
const ideal = readFileSync(topologyPath('ideal'), 'utf8');
const write = (name: string, kind: string): string => {
  const text = ideal.replace(/topology: ring_1d\b/, `topology: ${kind}`);
  if (text === ideal) throw new Error('ideal.yaml names no ring_1d');
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const mine = write('mine.yaml', './my_crossbar.ts');

const rt = new TestRuntime();
t.teardown(() => rt.close());

t.test("a user's kind by path runs the ring all-reduce like the shipped switch, with one result on every thread layout", async (t) => {
  const run = async (topology: string, threads: 1 | 'rank', sets: string[] = []) => {
    const [r] = await rt.bench('ccl_allreduce', { topology, threads, dtype: 'f32', sets: [...sets, 'ccl.n_elem=1536', 'system.sips.count=4'] });
    return { ok: r.ok, critNs: r.critNs };
  };
  const shipped = await run('ideal', 1, ['system.sips.topology=single_switch']);
  t.ok(shipped.ok);
  t.same([await run(mine, 1), await run(mine, 'rank')], [shipped, shipped]);
});

t.test('the loaded topology names the module by its file URL, and its Machine routes through the user fabric', async (t) => {
  const topo = await loadTopologyWithKind(mine, ['system.sips.count=3']);
  t.equal(topo.system.sips.topology, new URL('my_crossbar.ts', `file://${dir}/`).href);
  const m = new Machine(topo);
  t.same([m.sipTopology.name, m.sipHops(0, 2), [...m.fabric.route(0, 2)]], ['my_crossbar', 2, [3, 2]]);
});

t.test('a path to no file is ERR_CONFIG at system.sips.topology; a module without a kind is ERR_MODULE_EXPORT', async (t) => {
  const missing = await loadTopologyWithKind(write('missing.yaml', './nowhere.ts')).catch((e: unknown) => e);
  t.ok(missing instanceof ConfigError);
  t.same((missing as ConfigError).problems.map((p) => p.path), ['system.sips.topology']);
  const bad = await loadTopologyWithKind(write('bad.yaml', './no_kind.mjs')).catch((e: unknown) => e);
  t.ok(bad instanceof KernbenchError && bad.code === 'ERR_MODULE_EXPORT', String(bad));
});

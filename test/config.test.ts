// Runs on: main thread (tap). Covers: loading topology and CCL files, every
// problem of a bad file reported at once with file:line:col and dotted path,
// `--set` overrides, CCL precedence, paths and the generated JSON Schemas.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { configError } from './helpers/config-error.js';
import { ConfigError, type ConfigProblem } from '../lib/errors.js';
import { loadCcl, loadCclFile, loadTopology, resolveCcl, splitSets } from '../lib/config/load.js';
import { DEFAULT_CCL_FILE, listTopologies, SCHEMAS_DIR, TOPOLOGIES_DIR, topologyPath } from '../lib/config/paths.js';
import { JSON_SCHEMA_FILES, writeJsonSchemas } from '../lib/config/write-json-schemas.js';
import { TOPOLOGY_YAML } from './fixtures/topology-text.js';

// A small valid topology. Tests derive bad files from it by replacing one line.
const TOPOLOGY = TOPOLOGY_YAML;

const CCL = `defaults:
  algorithm: a
  buffer_kind: tcm
  backpressure: sleep
  n_slots: 4
  slot_size: 4096
  vc_chunk_size: 1024
  ipcq_credit_size_bytes: 16
  n_elem: 1024
algorithms:
  a:
    module: ring_allreduce
    topology: ring_1d
    n_slots: 2
  b:
    module: ring_allreduce
    topology: ring_1d
`;

/** TOPOLOGY with each `[from, to]` replacement applied once (each `from` must occur). */
function topology(...edits: [string, string][]): string {
  return edits.reduce((text, [from, to]) => {
    if (!text.includes(from)) throw new Error(`fixture has no '${from}'`);
    return text.replace(from, to);
  }, TOPOLOGY);
}

/** 1-based line and column of `needle` in `text`, plus `shift` columns. */
function at(text: string, needle: string, shift = 0): { line: number; col: number } {
  const i = text.indexOf(needle);
  if (i < 0) throw new Error(`fixture has no '${needle}'`);
  const before = text.slice(0, i).split('\n');
  return { line: before.length, col: before[before.length - 1].length + 1 + shift };
}

const where = (p: ConfigProblem) => ({ file: p.file, path: p.path, line: p.line, col: p.col });

/** Write `text` as `name` in a fresh testdir; returns the path relative to the cwd, as a user would type it. */
function fixture(tt: { testdir(content: Record<string, string>): string }, name: string, text: string): string {
  return relative(process.cwd(), join(tt.testdir({ [name]: text }), name));
}

t.test('every shipped topology loads', async (t) => {
  const names = listTopologies();
  for (const required of ['default', 'ideal', 'ring_1d_6', 'torus_2d_2x3', 'torus_2d_3x2', 'mesh_2d_2x3', 'ideal_ring_1d_6', 'ideal_torus_2d_2x3']) {
    t.ok(names.includes(required), `${required} is shipped`);
  }
  for (const name of names) t.equal(loadTopology(topologyPath(name)).name, name, `${name} loads and is named after its file`);
});

t.test('ccl.yaml loads and every algorithm entry resolves', async (t) => {
  const file = loadCclFile(DEFAULT_CCL_FILE);
  t.same(Object.keys(file.algorithms), ['ring_allreduce', 'ring_allreduce_tcm', 'ring_allreduce_sram', 'ring_allreduce_hbm', 'ring_allreduce_ws3', 'mesh_allreduce', 'mesh_allreduce_no_wrap', 'tree_allreduce', 'hierarchical_allreduce', 'hierarchical_allreduce_center', 'recursive_doubling_allreduce', 'rabenseifner_allreduce', 'hello_send']);
  for (const name of Object.keys(file.algorithms)) t.equal(resolveCcl(file, DEFAULT_CCL_FILE, { algorithm: name }).algorithm, name);
  t.equal(loadCcl(DEFAULT_CCL_FILE).algorithm, 'ring_allreduce', 'defaults.algorithm is used when none is chosen');
});

t.test('every shipped YAML file points editors at its JSON Schema on the first line', async (t) => {
  for (const name of listTopologies()) {
    t.equal(readFileSync(topologyPath(name), 'utf8').split('\n')[0], '# yaml-language-server: $schema=../schemas/topology.schema.json', name);
  }
  t.equal(readFileSync(DEFAULT_CCL_FILE, 'utf8').split('\n')[0], '# yaml-language-server: $schema=../schemas/ccl.schema.json');
});

t.test('the ideal topology is the alpha-beta machine: one link class, everything else free', async (t) => {
  const { timing, system } = loadTopology(topologyPath('ideal'));
  t.same(system.sips, { count: 8, topology: 'ring_1d' });
  for (const link of Object.values(timing.links)) t.same(link, { bandwidth_gb_s: 100, latency_ns: 1000 });
  for (const space of Object.values(timing.memory)) t.same([space.bandwidth_gb_s, space.latency_ns], [Infinity, 0]);
  t.same([timing.pe.gemm_macs_per_cycle, timing.pe.vector_lanes, timing.dma.setup_ns], [Infinity, Infinity, 0]);
});

t.test('a bad file reports all its problems at once, each with file:line:col and dotted path', async (t) => {
  const text = topology(['count: 2', 'count: 0'], ['topology: ring_1d', 'topology: ring'], ['  dma: {setup_ns: 5}\n', '']);
  const file = fixture(t, 'bad.yaml', text);
  const err = configError(() => loadTopology(file));
  t.equal(err.code, 'ERR_CONFIG');
  t.same(err.problems.map(where), [
    { file, path: 'system.sips.count', ...at(text, 'count: 0', 'count: '.length) },
    { file, path: 'system.sips.topology', ...at(text, 'topology: ring', 'topology: '.length) },
    // A missing key points at the nearest parent that exists.
    { file, path: 'timing.dma', ...at(text, 'timing:') },
  ]);
  t.match(err.problems[0].message, /got 0$/, 'the message ends with what was received');
  t.match(err.message, `${file}:${at(text, 'count: 0').line}:`, 'the message names file:line');
});

t.test('an unknown key is reported by name at its own position', async (t) => {
  const text = topology(['    pe_per_corner: 1\n', '    pe_per_corner: 1\n    cout: 3\n']);
  const file = fixture(t, 'unknown.yaml', text);
  const [problem, ...rest] = configError(() => loadTopology(file)).problems;
  t.same(rest, []);
  t.same(where(problem), { file, path: 'cube.pe_layout.cout', ...at(text, 'cout') });
  t.match(problem.message, "unknown key 'cout'");
});

t.test('YAML syntax errors are reported together with schema problems', async (t) => {
  const text = topology(['count: 2', 'count: 0'], ['name: fixture', 'name: fixture\nname: again']);
  const file = fixture(t, 'syntax.yaml', text);
  const problems = configError(() => loadTopology(file)).problems;
  t.ok(problems.some((p) => p.path === '' && p.line === at(text, 'name: again').line), 'the duplicate key has a line');
  t.ok(problems.some((p) => p.path === 'system.sips.count'), 'the schema problem is there too');
});

t.test('a 2-D SIP topology without a w x h grid is rejected', async (t) => {
  const text = topology(['topology: ring_1d', 'topology: torus_2d']);
  const file = fixture(t, 'torus.yaml', text);
  t.same(configError(() => loadTopology(file)).problems.map(where), [{ file, path: 'system.sips.w', ...at(text, 'sips:') }]);
});

t.test('a 2-D grid whose w x h differs from the SIP count is rejected', async (t) => {
  const text = topology(['topology: ring_1d', 'topology: mesh_2d_no_wrap\n    w: 2\n    h: 2']);
  const file = fixture(t, 'mesh.yaml', text);
  t.same(configError(() => loadTopology(file)).problems.map(where), [{ file, path: 'system.sips.count', ...at(text, 'count: 2', 'count: '.length) }]);
});

t.test('.inf is accepted for bandwidths and throughputs', async (t) => {
  const file = fixture(t, 'inf.yaml', topology(['tcm: {bytes: 1024, bandwidth_gb_s: 100', 'tcm: {bytes: 1024, bandwidth_gb_s: .inf'], ['vector_lanes: 16', 'vector_lanes: .inf']));
  const { timing } = loadTopology(file);
  t.same([timing.memory.tcm.bandwidth_gb_s, timing.pe.vector_lanes], [Infinity, Infinity]);
});

t.test('a --set changes a field, its value parsed as YAML', async (t) => {
  const file = fixture(t, 'set.yaml', TOPOLOGY);
  const topo = loadTopology(file, ['system.sips.count=4', 'timing.links.sip_sip.bandwidth_gb_s=.inf', 'cube.pe_layout.corners=[nw, se]']);
  t.same([topo.system.sips.count, topo.timing.links.sip_sip.bandwidth_gb_s, topo.cube.pe_layout.corners], [4, Infinity, ['nw', 'se']]);
});

t.test('a --set whose path is not in the schema is reported under --set with its path', async (t) => {
  const file = fixture(t, 'set.yaml', TOPOLOGY);
  const err = configError(() => loadTopology(file, ['system.sips.cout=3']));
  t.same(err.problems.map(where), [{ file: '--set', path: 'system.sips.cout', line: undefined, col: undefined }]);
});

t.test('a --set with a bad value is reported under --set, not at the file line it replaced', async (t) => {
  const file = fixture(t, 'set.yaml', TOPOLOGY);
  const err = configError(() => loadTopology(file, ['system.sips.count=0']));
  t.same(err.problems.map(where), [{ file: '--set', path: 'system.sips.count', line: undefined, col: undefined }]);
});

t.test('a malformed --set is a usage error', async (t) => {
  const file = fixture(t, 'set.yaml', TOPOLOGY);
  for (const bad of ['system.sips.count', '=4', 'system..count=4']) t.throws(() => loadTopology(file, [bad]), { code: 'ERR_INVALID_SET' }, bad);
});

t.test('ccl. sets are routed to the CCL configuration with the prefix stripped', async (t) => {
  t.same(splitSets(['system.sips.count=4', 'ccl.n_slots=1', 'ccl.algorithm=b']), { topology: ['system.sips.count=4'], ccl: ['n_slots=1', 'algorithm=b'] });
  const file = fixture(t, 'set.yaml', TOPOLOGY);
  t.equal(loadTopology(file, ['ccl.n_slots=1']).system.sips.count, 2, 'loadTopology leaves ccl. sets alone');
});

t.test('CCL fields resolve with precedence --set > algorithm entry > defaults', async (t) => {
  const file = fixture(t, 'ccl.yaml', CCL);
  const pick = (opts: Parameters<typeof loadCcl>[1]) => {
    const c = loadCcl(file, opts);
    return { algorithm: c.algorithm, n_slots: c.n_slots, slot_size: c.slot_size };
  };
  t.same(pick({}), { algorithm: 'a', n_slots: 2, slot_size: 4096 }, 'entry over defaults');
  t.same(pick({ algorithm: 'b' }), { algorithm: 'b', n_slots: 4, slot_size: 4096 }, 'defaults where the entry is silent');
  t.same(pick({ sets: ['ccl.n_slots=1'] }), { algorithm: 'a', n_slots: 1, slot_size: 4096 }, 'set over entry');
  t.same(pick({ sets: ['ccl.algorithm=b', 'ccl.slot_size=8192'] }), { algorithm: 'b', n_slots: 4, slot_size: 8192 }, 'a ccl.algorithm set picks the entry');
});

t.test('an unknown algorithm is a config error that lists the known ones', async (t) => {
  const file = fixture(t, 'ccl.yaml', CCL);
  const [problem, ...rest] = configError(() => loadCcl(file, { algorithm: 'tree' })).problems;
  t.same(rest, []);
  t.match(problem.message, /expected one of a\|b, got 'tree'$/);
});

t.test('a CCL file whose default algorithm is not one of its entries is rejected', async (t) => {
  const text = CCL.replace('algorithm: a', 'algorithm: zz');
  const file = fixture(t, 'ccl.yaml', text);
  t.same(configError(() => loadCclFile(file)).problems.map(where), [{ file, path: 'defaults.algorithm', ...at(text, 'zz') }]);
});

t.test('vc_chunk_size larger than slot_size is rejected where the value was written', async (t) => {
  const text = CCL.replace('    n_slots: 2', '    n_slots: 2\n    vc_chunk_size: 8192');
  const file = fixture(t, 'ccl.yaml', text);
  t.same(configError(() => loadCcl(file)).problems.map(where), [{ file, path: 'algorithms.a.vc_chunk_size', ...at(text, '8192') }]);
  t.same(configError(() => loadCcl(fixture(t, 'ok.yaml', CCL), { sets: ['ccl.vc_chunk_size=8192'] })).problems.map(where), [
    { file: '--set', path: 'ccl.vc_chunk_size', line: undefined, col: undefined },
  ]);
});

t.test('a bare topology name is a shipped file, anything path-like is kept as given', async (t) => {
  t.equal(topologyPath('ideal'), join(TOPOLOGIES_DIR, 'ideal.yaml'));
  t.equal(topologyPath('x/ideal'), 'x/ideal');
  t.equal(topologyPath('mine.yaml'), 'mine.yaml');
});

t.test('the committed JSON Schemas match the zod schemas', async (t) => {
  const dir = t.testdir({});
  writeJsonSchemas(dir);
  for (const name of Object.keys(JSON_SCHEMA_FILES)) {
    t.equal(readFileSync(join(dir, name), 'utf8'), readFileSync(join(SCHEMAS_DIR, name), 'utf8'), `${name} is up to date (run write-json-schemas)`);
  }
});

t.test('the JSON Schema lets .inf through where zod does: a throughput is any number > 0', async (t) => {
  const schema = JSON.parse(readFileSync(join(SCHEMAS_DIR, 'topology.schema.json'), 'utf8'));
  const bw = schema.properties.timing.properties.links.properties.sip_sip.properties.bandwidth_gb_s;
  t.same([bw.type, bw.exclusiveMinimum], ['number', 0]);
});

// Runs on: main thread (tap). Covers: the algorithm catalog (the algorithms
// folder and each module's meta) and the resolve step every run and every
// `kernbench validate` goes through before a thread starts: module names and
// paths, the module contract, topologies a module accepts, params, world size
// against the topology — each problem at file:line:col or at its --set — and
// user algorithm modules (.ts and .mjs, outside the package) that run.
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { algorithmCatalog, shippedAlgorithmNames } from '../lib/ccl/catalog.js';
import { defineAlgorithm } from '../lib/ccl/define-algorithm.js';
import { resolveRunCcl } from '../lib/ccl/resolve.js';
import { loadCclFile, loadTopology } from '../lib/config/load.js';
import { DEFAULT_CCL_FILE, listTopologies, topologyPath } from '../lib/config/paths.js';
import { ConfigError, KernbenchError, type ConfigProblem } from '../lib/errors.js';
import { TestRuntime } from './helpers/run.js';
import { cclText, userFolder } from './fixtures/user-algorithms.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const rt = new TestRuntime();
const user = userFolder();
t.teardown(async () => {
  await rt.close();
  user.remove();
});

/** 1-based line and column of `needle` in `text`, plus `shift` columns. */
function at(text: string, needle: string, shift = 0): { line: number; col: number } {
  const i = text.indexOf(needle);
  if (i < 0) throw new Error(`fixture has no '${needle}'`);
  const before = text.slice(0, i).split('\n');
  return { line: before.length, col: before[before.length - 1].length + 1 + shift };
}

const where = (p: ConfigProblem) => ({ file: p.file, path: p.path, line: p.line, col: p.col });

/** Resolve `cclFile` on shipped topology `topology`. */
function resolveOn(cclFile: string, topology = 'default', opts: { algorithm?: string; sets?: string[] } = {}) {
  const sets = opts.sets ?? [];
  return resolveRunCcl(cclFile, { name: topology, topology: loadTopology(topologyPath(topology), sets) }, { ...opts, sets });
}

/** The problems of the ConfigError `p` rejects with. */
async function problemsOf(p: Promise<unknown>): Promise<ConfigProblem[]> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('expected a ConfigError, got none');
}

t.test('the shipped catalog is the algorithms folder: one algorithm per source file, named by it', async (t) => {
  const sources = readdirSync(join(ROOT, 'lib', 'ccl', 'algorithms'))
    .filter((f) => extname(f) === '.ts')
    .map((f) => f.slice(0, -3))
    .sort();
  t.same(shippedAlgorithmNames(), sources);
  t.same((await algorithmCatalog()).map((a) => a.name), sources);
});

t.test('every shipped all_reduce module exports an allReduce kernel, and point_to_point ones none is required', async (t) => {
  const seen = (await algorithmCatalog()).map((a) => ({ name: a.name, kernel: a.allReduce !== undefined }));
  t.same(
    seen,
    (await algorithmCatalog()).map((a) => ({ name: a.name, kernel: a.meta.provides === 'all_reduce' })),
  );
});

t.test('defineAlgorithm refuses metadata that breaks the contract, naming each bad field', async (t) => {
  const bad = { provides: 'all_gather', arrangement: 'logical', topologies: [], summary: 'two\nlines' } as unknown as Parameters<typeof defineAlgorithm>[0];
  t.throws(() => defineAlgorithm(bad), { code: 'ERR_MODULE_DEFINITION', message: /provides.*topologies.*summary/s });
});

t.test('every shipped ccl.yaml entry resolves on at least one shipped topology', async (t) => {
  const entries = Object.keys(loadCclFile(DEFAULT_CCL_FILE).algorithms);
  const homeless: string[] = [];
  for (const algorithm of entries) {
    let ok = false;
    for (const topology of listTopologies()) {
      ok = await resolveOn(DEFAULT_CCL_FILE, topology, { algorithm }).then(
        () => true,
        (e: unknown) => {
          if (e instanceof ConfigError) return false;
          throw e;
        },
      );
      if (ok) break;
    }
    if (!ok) homeless.push(algorithm);
  }
  t.same(homeless, []);
});

t.test('an unknown module name is a config error at the module value', async (t) => {
  const text = cclText('  typo:\n    module: ring_alreduce\n    topology: ring_1d\n');
  const file = user.write('unknown.yaml', text);
  t.same((await problemsOf(resolveOn(file))).map(where), [{ file, path: 'algorithms.typo.module', ...at(text, 'ring_alreduce') }]);
});

t.test('a module path with no file behind it is a config error at the module value', async (t) => {
  const text = cclText('  gone:\n    module: ./nowhere.ts\n    topology: ring_1d\n');
  const file = user.write('gone.yaml', text);
  t.same((await problemsOf(resolveOn(file))).map(where), [{ file, path: 'algorithms.gone.module', ...at(text, './nowhere.ts') }]);
});

t.test('a module that does not accept the entry topology is a config error at the topology value', async (t) => {
  const text = cclText('  ring2d:\n    module: ring_allreduce\n    topology: torus_2d\n');
  const file = user.write('ring2d.yaml', text);
  t.same((await problemsOf(resolveOn(file))).map(where), [{ file, path: 'algorithms.ring2d.topology', ...at(text, 'torus_2d') }]);
});

t.test('params are checked by the module schema: a bad value and an unknown key each at their position', async (t) => {
  const text = cclText('  h:\n    module: hierarchical_allreduce\n    topology: ring_1d\n    params:\n      root: middle\n      depth: 2\n  r:\n    module: ring_allreduce\n    topology: ring_1d\n    params: {root: center}\n');
  const file = user.write('params.yaml', text);
  t.same((await problemsOf(resolveOn(file))).map(where), [
    { file, path: 'algorithms.h.params.root', ...at(text, 'middle') },
    { file, path: 'algorithms.h.params.depth', ...at(text, 'depth') },
    { file, path: 'algorithms.r.params.root', ...at(text, 'root: center') },
  ]);
});

t.test('params default where the entry gives none, and a --set overrides them', async (t) => {
  const corner = await resolveOn(DEFAULT_CCL_FILE, 'default', { algorithm: 'hierarchical_allreduce' });
  const center = await resolveOn(DEFAULT_CCL_FILE, 'default', { algorithm: 'hierarchical_allreduce', sets: ['ccl.params.root=center'] });
  t.same([corner.params, center.params], [{ root: 'corner' }, { root: 'center' }]);
  const bad = await problemsOf(resolveOn(DEFAULT_CCL_FILE, 'default', { algorithm: 'hierarchical_allreduce', sets: ['ccl.params.root=middle'] }));
  t.same(bad.map(where), [{ file: '--set', path: 'ccl.params.root', line: undefined, col: undefined }]);
});

t.test('world_size larger than the SIP count is refused at the entry line, or at the --set that gave it', async (t) => {
  const text = readFileSync(DEFAULT_CCL_FILE, 'utf8');
  const inFile = await problemsOf(resolveOn(DEFAULT_CCL_FILE, 'default', { algorithm: 'ring_allreduce_ws3' }));
  t.same(inFile.map(where), [{ file: DEFAULT_CCL_FILE, path: 'algorithms.ring_allreduce_ws3.world_size', ...at(text, 'world_size: 3', 'world_size: '.length) }]);
  const bySet = await problemsOf(resolveOn(DEFAULT_CCL_FILE, 'default', { sets: ['ccl.world_size=5'] }));
  t.same(bySet.map(where), [{ file: '--set', path: 'ccl.world_size', line: undefined, col: undefined }]);
  t.equal((await resolveOn(DEFAULT_CCL_FILE, 'ring_1d_6', { algorithm: 'ring_allreduce_ws3' })).world_size, 3, 'fits 6 SIPs');
});

t.test('a 2-D algorithm on a ring topology is refused at the entry topology; on a grid of another size at world_size', async (t) => {
  const text = readFileSync(DEFAULT_CCL_FILE, 'utf8');
  const ring = await problemsOf(resolveOn(DEFAULT_CCL_FILE, 'ring_1d_6', { algorithm: 'mesh_allreduce' }));
  t.same(ring.map(where), [{ file: DEFAULT_CCL_FILE, path: 'algorithms.mesh_allreduce.topology', ...at(text, 'topology: torus_2d', 'topology: '.length) }]);
  const grid = await problemsOf(resolveOn(DEFAULT_CCL_FILE, 'torus_2d_2x3', { algorithm: 'mesh_allreduce', sets: ['ccl.world_size=4'] }));
  t.same(grid.map(where), [{ file: '--set', path: 'ccl.world_size', line: undefined, col: undefined }]);
});

t.test('a user module that breaks the contract is refused in the resolve step with its path, the exports expected and found', async (t) => {
  const file = user.write('broken.yaml', cclText('  broken:\n    module: ./broken.ts\n    topology: ring_1d\n'));
  const err = await resolveOn(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof KernbenchError, 'a KernbenchError');
  t.equal((err as KernbenchError).code, 'ERR_MODULE_EXPORT');
  t.match((err as KernbenchError).message, join(user.dir, 'broken.ts'));
  t.match((err as KernbenchError).message, /allReduce: missing.*Expected exports: meta \(.*\), allReduce \(.*\); found: allreduce, meta/);
});

t.test('a ccl.yaml module path resolves against the file folder and the config carries the module file URL', async (t) => {
  const ccl = await resolveOn(join(user.dir, 'ccl.yaml'), 'default', { algorithm: 'mine_mjs' });
  t.same([fileURLToPath(ccl.module_url), ccl.params], [join(user.dir, 'algos', 'my_allreduce.mjs'), { mark: 7 }]);
});

for (const algorithm of ['mine', 'mine_mjs']) {
  t.test(`a user algorithm module (${algorithm === 'mine' ? '.ts' : '.mjs with params'}) outside the package runs: every rank holds the exact sum`, async (t) => {
    const seen = [];
    // Two executors: each imports the module itself (a .ts one through its own tsx hooks).
    for (const threads of [1, 2]) {
      const [r] = await rt.bench('ccl_allreduce', { ccl: join(user.dir, 'ccl.yaml'), algorithm, topology: 'ring_1d_6', threads, dtype: 'f32', sets: ['ccl.world_size=3', 'ccl.n_elem=301'] });
      seen.push({ threads, ok: r.ok, worldSize: r.worldSize, lines: r.ok ? [] : r.lines });
    }
    t.same(
      seen,
      [1, 2].map((threads) => ({ threads, ok: true, worldSize: 3, lines: [] })),
    );
  });
}

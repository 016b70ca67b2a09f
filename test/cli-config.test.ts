// Runs on: main thread (tap). Covers: configuration files and --set through the
// command line — a bad topology reported at file:line:col by run and validate,
// a --set of the wrong type, and every shipped topology validating.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { TOPOLOGY_YAML } from './fixtures/topology-text.js';
import { assertUsageError, kernbench, ROOT } from './helpers/cli.js';

// The small valid topology, with a SIP count of 0 and an unknown key under cube_mesh.
const BAD_TOPOLOGY = TOPOLOGY_YAML.replace('name: fixture', 'name: bad')
  .replace('    count: 2', '    count: 0')
  .replace('  cube_mesh: {w: 1, h: 1}', '  cube_mesh:\n    w: 1\n    h: 1\n    depth: 2');

t.test('a bad topology file exits 2 and reports every problem at file:line:col with its dotted path', async (t) => {
  const file = join(t.testdir({ 'bad.yaml': BAD_TOPOLOGY }), 'bad.yaml');
  const r = await kernbench(['run', '--bench', 'ccl_allreduce', '--topology', file]);
  assertUsageError(t, r, 'ERR_CONFIG');
  t.match(r.stderr, `${file}:4:12: system.sips.count: `, 'the zero count, at its value');
  t.match(r.stderr, `${file}:10:5: sip.cube_mesh.depth: `, 'the unknown key, at the key');
});

t.test('validate on a bad topology file exits 2 with the same problems', async (t) => {
  const file = join(t.testdir({ 'bad.yaml': BAD_TOPOLOGY }), 'bad.yaml');
  const r = await kernbench(['validate', '--topology', file]);
  assertUsageError(t, r, 'ERR_CONFIG');
  t.match(r.stderr, `${file}:4:12: system.sips.count: `);
  t.match(r.stderr, `${file}:10:5: sip.cube_mesh.depth: `);
});

t.test('--set with a value of the wrong type exits 2', async (t) => {
  const r = await kernbench(['run', '--bench', 'ccl_allreduce', '--set', 'system.sips.count=abc']);
  assertUsageError(t, r, 'ERR_CONFIG');
  t.match(r.stderr, 'system.sips.count');
});

t.test('validate exits 0 on every shipped topology with the shipped CCL file', async (t) => {
  const topologies = readdirSync(join(ROOT, 'topologies')).filter((f) => f.endsWith('.yaml') && f !== 'ccl.yaml');
  const runs = await Promise.all(topologies.map((f) => kernbench(['validate', '--topology', f.slice(0, -'.yaml'.length)])));
  runs.forEach((r, i) => t.same([r.exitCode, r.stderr], [0, ''], topologies[i]));
});

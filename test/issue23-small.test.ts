// Runs on: main thread (tap). Covers: the smaller breaks of issue 23 (item 6),
// one regression test each, through the public API or the command line, asserting
// error codes and exit codes.
import { join } from 'node:path';
import t from 'tap';
import { configError } from './helpers/config-error.js';
import { ConfigError } from '../lib/errors.js';
import { loadTopology } from '../lib/config/load.js';
import { TOPOLOGY_YAML } from './fixtures/topology-text.js';
import { assertUsageError, kernbench } from './helpers/cli.js';

t.test('an alias to an anchor never set is reported at its line:col, not as an alias bomb', async (t) => {
  const file = join(t.testdir({ 'alias.yaml': 'name: ok\nother: *nope\n' }), 'alias.yaml');
  const err = configError(() => loadTopology(file));
  t.equal(err.code, 'ERR_CONFIG');
  t.same(err.problems.map((p) => [p.line, p.col]), [[2, 8]]);
});

t.test('a torus without w and h is refused at system.sips.w, naming what is missing rather than printing undefined', async (t) => {
  const text = TOPOLOGY_YAML.replace('topology: ring_1d', 'topology: torus_2d');
  const file = join(t.testdir({ 'torus.yaml': text }), 'torus.yaml');
  const err = configError(() => loadTopology(file));
  t.same(err.problems.map((p) => p.path), ['system.sips.w']);
  t.notMatch(err.problems[0].message, /undefined/);
});

t.test('an error message shortens a long echoed key and escapes bidirectional controls', async (t) => {
  const key = `k${'x'.repeat(5000)}`;
  const file = join(t.testdir({ 'long.yaml': `${TOPOLOGY_YAML}? ${key}\n: 1\n\u202eevil: 2\n` }), 'long.yaml');
  const r = await kernbench(['validate', '--topology', file]);
  assertUsageError(t, r, 'ERR_CONFIG');
  t.ok(r.stderr.length < 2000, `stderr is ${r.stderr.length} characters`);
  t.notOk(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(r.stderr), 'no raw bidirectional control');
  const err = configError(() => loadTopology(file));
  t.ok(err.message.length < 2000, `the library's message is ${err.message.length} characters`);
  t.same(err.problems.map((p) => p.path.length), [key.length, '\u202eevil'.length], 'the problems keep the whole path');
});

for (const ext of ['js', 'mjs']) {
  t.test(`a syntax error in a .${ext} bench is reported with its file:line:col, as in a .ts bench`, async (t) => {
    const dir = t.testdir({ 'package.json': '{"type": "module"}', [`bad.${ext}`]: 'export const a = 1;\nexport const b = (;\n' });
    const file = join(dir, `bad.${ext}`);
    const r = await kernbench(['run', '--bench', file]);
    assertUsageError(t, r, 'ERR_MODULE_SYNTAX');
    t.ok(r.stderr.includes(`${file}:2:19:`), r.stderr);
  });
}

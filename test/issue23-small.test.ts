// Runs on: main thread (tap). Covers: the smaller breaks of issue 23 (item 6),
// one regression test each, through the public API or the command line, asserting
// error codes and exit codes.
import { join } from 'node:path';
import t from 'tap';
import { ConfigError } from '../lib/errors.js';
import { loadTopology } from '../lib/config/load.js';
import { TOPOLOGY_YAML } from './fixtures/topology-text.js';

/** The ConfigError `fn` throws (a failed assertion if it throws anything else). */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError, nothing was thrown');
}

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

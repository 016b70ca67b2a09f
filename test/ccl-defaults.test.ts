// Runs on: main thread (tap). Covers: a CCL file's `defaults` need only name
// the algorithm; every tunable it leaves out takes kernbench's own default,
// the one topologies/ccl.yaml writes (lib/config/load.ts).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { TUNABLES } from '../lib/config/ccl-schema.js';
import { loadCcl, loadCclFile } from '../lib/config/load.js';
import { DEFAULT_CCL_FILE } from '../lib/config/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'kernbench-ccl-defaults-'));

t.test('topologies/ccl.yaml gives every tunable a default', async (t) => {
  const shipped = loadCclFile(DEFAULT_CCL_FILE).defaults as Record<string, unknown>;
  t.same(TUNABLES.filter((k) => shipped[k] === undefined), []);
});

t.test('a file whose defaults name only the algorithm runs with the shipped tunables; a tunable it sets wins', async (t) => {
  const file = join(dir, 'mine.yaml');
  writeFileSync(file, 'defaults:\n  algorithm: mine\n  n_slots: 2\nalgorithms:\n  mine:\n    module: ring_allreduce\n    topology: ring_1d\n');
  const shipped = loadCcl(DEFAULT_CCL_FILE, { algorithm: 'ring_allreduce' });
  const mine = loadCcl(file);
  const { algorithm: _a, module: _m, n_slots: nSlots, ...rest } = mine;
  const { algorithm: _b, module: _n, n_slots: _s, ...shippedRest } = shipped;
  t.equal(nSlots, 2, 'its own n_slots');
  t.same(rest, shippedRest, 'every other tunable as shipped');
});

t.test('a bad tunable in a short defaults block is still a config error', async (t) => {
  const file = join(dir, 'bad.yaml');
  writeFileSync(file, 'defaults:\n  algorithm: mine\n  n_slots: 0\nalgorithms:\n  mine:\n    module: ring_allreduce\n    topology: ring_1d\n');
  t.throws(() => loadCcl(file), { code: 'ERR_CONFIG' });
});

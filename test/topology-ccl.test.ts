// A topology's own IPCQ window (its `ccl:` section, lib/config/topology-schema.ts):
// it replaces the CCL file's defaults, and an algorithm entry or a
// `--set ccl.<field>` still wins over it (issue 14, item 5).
import t from 'tap';
import { loadCclFile, loadTopology, resolveCcl } from '../lib/config/load.js';
import { DEFAULT_CCL_FILE, topologyPath } from '../lib/config/paths.js';
import type { CclFile } from '../lib/config/ccl-schema.js';

const ideal = loadTopology(topologyPath('ideal'));
const shipped = loadCclFile(DEFAULT_CCL_FILE);

t.test("the ideal topology's ccl section replaces the CCL file's default window", async (t) => {
  const window = ideal.ccl ?? {};
  t.ok(window.n_slots !== undefined && window.n_slots !== shipped.defaults.n_slots, 'the section sets its own n_slots');
  const c = resolveCcl(shipped, DEFAULT_CCL_FILE, { topology: ideal });
  t.same([c.n_slots, c.slot_size, c.vc_chunk_size], [window.n_slots, window.slot_size, window.vc_chunk_size]);
  const plain = resolveCcl(shipped, DEFAULT_CCL_FILE, { topology: loadTopology(topologyPath('default')) });
  t.same([plain.n_slots, plain.vc_chunk_size], [shipped.defaults.n_slots, shipped.defaults.vc_chunk_size], 'a topology without the section keeps the defaults');
});

t.test("an algorithm entry and a --set ccl.<field> win over the topology's ccl section", async (t) => {
  const file: CclFile = { ...shipped, algorithms: { ...shipped.algorithms, narrow: { module: 'ring_allreduce', topology: 'ring_1d', n_slots: 3 } } };
  t.equal(resolveCcl(file, 'mem.yaml', { topology: ideal, algorithm: 'narrow' }).n_slots, 3);
  t.equal(resolveCcl(shipped, DEFAULT_CCL_FILE, { topology: ideal, sets: ['ccl.n_slots=2'] }).n_slots, 2);
});

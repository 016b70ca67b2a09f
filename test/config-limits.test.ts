// Runs on: main thread (tap). Covers: configurations this machine cannot hold
// are refused before anything is allocated, with the figure (issue 13.7):
// a huge cube mesh, a huge SIP count, huge IPCQ rings, slots smaller than one
// element, and an integer beyond 2^53 said as a number bound.
import t from 'tap';
import { loadCcl, loadTopology } from '../lib/config/load.js';
import { DEFAULT_CCL_FILE, topologyPath } from '../lib/config/paths.js';
import { buildPlan, checkSessionMemory, type SessionPlan, type ThreadLayout } from '../lib/config/plan.js';
import { kernbench } from './helpers/cli.js';

function plan(sets: string[]): void {
  const topology = loadTopology(topologyPath('default'), sets);
  const ccl = { ...loadCcl(DEFAULT_CCL_FILE, { sets }), module_url: '' };
  checkSessionMemory(topology, ccl);
}

t.test('the shipped default configuration fits', async (t) => {
  t.doesNotThrow(() => plan([]));
});

t.test('a 100000 x 100000 cube mesh, 10^8 SIPs, and 10^6 slots of 1 MiB are refused with ERR_CONFIG_TOO_LARGE before any allocation', async (t) => {
  for (const sets of [
    ['sip.cube_mesh.w=100000', 'sip.cube_mesh.h=100000'],
    ['system.sips.count=100000000'],
    ['ccl.n_slots=1000000', 'ccl.slot_size=1048576'],
  ]) {
    t.throws(() => plan(sets), { code: 'ERR_CONFIG_TOO_LARGE', message: /needs? [\d.]+ GiB/ }, sets.join(' '));
  }
});

t.test('slots and pieces smaller than one element are a configuration error, not a deadlock at run time', async (t) => {
  t.throws(() => loadCcl(DEFAULT_CCL_FILE, { sets: ['ccl.slot_size=2', 'ccl.vc_chunk_size=2'] }), { code: 'ERR_CONFIG' });
});

t.test('an integer field given 1e300 is told the integer bound, not an item count', async (t) => {
  t.throws(() => loadTopology(topologyPath('default'), ['system.sips.count=1e300']), { code: 'ERR_CONFIG', message: /an integer <= 9007199254740991/ });
});

t.test('through the CLI, validate refuses the huge mesh with exit 2, one line, no stack', async (t) => {
  const r = await kernbench(['validate', '--set', 'sip.cube_mesh.w=100000', '--set', 'sip.cube_mesh.h=100000']);
  t.equal(r.exitCode, 2);
  t.equal(r.errorCode, 'ERR_CONFIG_TOO_LARGE');
  t.match(r.stderr, /shared memory/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack');
});

t.test('4096 ranks under --threads 2 are sized for two threads: only one thread per rank needs a command slot per rank', async (t) => {
  const sets = ['system.sips.count=4096', 'ccl.n_elem=16384'];
  const topology = loadTopology(topologyPath('ideal'), sets);
  const ccl = { ...loadCcl(DEFAULT_CCL_FILE, { sets }), module_url: '' };
  const at = (threads: ThreadLayout): SessionPlan => buildPlan({ topologyName: 'ideal', topology, ccl, threads, jitterSeed: null, noData: true });
  t.equal(at(2).executors, 2);
  t.equal(at(1).executors, 1);
  // One thread per rank still needs 4097 threads' command slots (1 MiB each): more than one buffer holds.
  t.throws(() => at('rank'), { code: 'ERR_CONFIG_TOO_LARGE', message: /command and error slots/ });
});

// Runs on: main thread (tap). Covers: configurations this machine cannot hold
// are refused before anything is allocated, with the figure (issue 13.7):
// a huge cube mesh, a huge SIP count, huge IPCQ rings, slots smaller than one
// element, and an integer beyond 2^53 said as a number bound.
import t from 'tap';
import { loadCcl, loadTopology } from '../lib/config/load.js';
import { DEFAULT_CCL_FILE, topologyPath } from '../lib/config/paths.js';
import { buildPlan, checkSessionMemory, checkSharedMemory, checkThreadMemory, layoutExecutors, sessionDims, type SessionPlan, type ThreadLayout } from '../lib/config/plan.js';
import { Machine } from '../lib/topology/machine.js';
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
});

/** Bytes of every shared buffer of a p-rank ring session (ideal topology, --no-data) under `threads`, as the plan's check counts them. */
function sharedBytes(p: number, threads: ThreadLayout): number {
  const sets = [`system.sips.count=${p}`, 'ccl.n_elem=16384'];
  const m = new Machine(loadTopology(topologyPath('ideal'), sets));
  const ccl = { ...loadCcl(DEFAULT_CCL_FILE, { sets }), module_url: '' };
  return checkSharedMemory(sessionDims(m, ccl, layoutExecutors(threads, m), true, undefined));
}

t.test('shared memory grows linearly in p under every layout, and a thread per rank adds well under 1 MiB a rank (decision 0125)', async (t) => {
  for (const threads of [1, 2, 'rank', 'pe'] as ThreadLayout[]) {
    const [b1, b2, b4] = [1024, 2048, 4096].map((p) => sharedBytes(p, threads));
    // Linear: doubling p again adds twice what the first doubling added (a p^2 term would add four times).
    t.ok(b4 - b2 <= 2.01 * (b2 - b1), `--threads ${threads}: ${b1}, ${b2}, ${b4} bytes at p = 1024, 2048, 4096`);
  }
  // 64 command slots of 16 KiB a thread were 1 MiB a rank, 4 GiB in one buffer at p = 4096.
  const perRank = (sharedBytes(4096, 'rank') - sharedBytes(2048, 'rank')) / 2048;
  const perRankTwoThreads = (sharedBytes(4096, 2) - sharedBytes(2048, 2)) / 2048;
  t.ok(perRank - perRankTwoThreads <= 128 * 1024, `a thread per rank adds ${perRank - perRankTwoThreads} bytes a rank beside --threads 2's ${perRankTwoThreads}`);
});

t.test('4096 threads are refused by the thread-memory check, naming the layout and a --threads N that fits; their shared memory alone fits', async (t) => {
  const sets = ['system.sips.count=4096', 'ccl.n_elem=16384'];
  const m = new Machine(loadTopology(topologyPath('ideal'), sets));
  t.equal(layoutExecutors('rank', m), 4096);
  const shared = sharedBytes(4096, 'rank');
  t.ok(shared < 2 ** 32, `${shared} bytes of shared memory under --threads rank`);
  const gib16 = 16 * 2 ** 30;
  t.throws(() => checkThreadMemory('rank', 4096, shared, gib16), { code: 'ERR_THREADS_EXCEED_MEMORY', message: /--threads rank starts 4096 threads.*--threads N for N up to \d+/ });
  t.doesNotThrow(() => checkThreadMemory(2, 2, sharedBytes(4096, 2), gib16));
  t.doesNotThrow(() => checkThreadMemory('rank', 256, sharedBytes(256, 'rank'), gib16));
});

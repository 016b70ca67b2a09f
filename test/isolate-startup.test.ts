// Runs on: main thread (tap), and the Workers it starts. Covers: what each isolate
// of a run loads when it starts, and that what only another isolate or another
// command uses stays out (decision 0205): the coordinator's entry point loads no
// SIP kind and no zod (it loads its session's kind when a session starts); an
// algorithm module on an executor does not build the topology file's schema;
// an executor of a shipped bench's ring all-reduce loads no zod (decision 0228:
// main checks options, meta and params, the other threads take them as checked);
// the command line's entry point loads `run`'s modules, not sweep's, stress's,
// the report's or the help text's. Every module is loaded again in each isolate,
// so what one loads for nothing is paid once a thread.
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { threadEnv, threadExecArgv } from '../lib/session/thread-flags.js';

const HOOK = new URL('./helpers/module-log-hook.js', import.meta.url).href;
const DIST = new URL('../', import.meta.url).href;

/** The module URLs a fresh thread loads while it imports `entries` (dist-relative paths), in order. */
async function modulesLoaded(...entries: string[]): Promise<string[]> {
  const urls = entries.map((e) => new URL(e, DIST).href);
  const code = `
    const { parentPort, MessageChannel } = require('node:worker_threads');
    const { register } = require('node:module');
    const { port1, port2 } = new MessageChannel();
    const loaded = [];
    port1.on('message', (m) => {
      if (typeof m === 'string') loaded.push(m);
      else parentPort.postMessage(loaded);
    });
    register(${JSON.stringify(HOOK)}, { data: { port: port2 }, transferList: [port2] });
    (async () => { for (const u of ${JSON.stringify(urls)}) await import(u); })()
      .then(() => port1.postMessage('flush'), (e) => parentPort.postMessage({ failed: String(e) }));`;
  const w = new Worker(code, { eval: true, execArgv: threadExecArgv(), env: threadEnv() });
  try {
    const reply = await new Promise<unknown>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
    if (!Array.isArray(reply)) throw new Error(`the entry points did not load: ${JSON.stringify(reply)}`);
    return (reply as string[]).map((u) => (u.startsWith(DIST) ? u.slice(DIST.length) : u));
  } finally {
    await w.terminate();
  }
}

/** A file of zod: the package's own, or the one file the build bundles it into (decision 0272). */
const ZOD = /[\\/]node_modules[\\/]zod[\\/]|^lib\/vendor\/zod\.js$/;
const YAML = /[\\/]node_modules[\\/]yaml[\\/]|^lib\/vendor\/yaml\.js$/;

t.test("the coordinator's entry point loads no SIP kind and no zod: it loads its session's kind when the session starts", async (t) => {
  const loaded = await modulesLoaded('lib/coordinator/coordinator-worker.js');
  t.ok(loaded.includes('lib/coordinator/coordinator-worker.js'), 'the hook saw the entry point');
  t.same(loaded.filter((u) => u.startsWith('lib/topology/kinds/')), [], 'no kind module');
  t.same(loaded.filter((u) => ZOD.test(u)), [], 'no file of zod');
});

t.test("an algorithm module on an executor does not build the topology file's schema", async (t) => {
  const loaded = await modulesLoaded('lib/executor/executor-worker.js', 'lib/ccl/algorithms/ring_allreduce.js');
  t.ok(loaded.includes('lib/ccl/algorithms/ring_allreduce.js'), 'the hook saw the algorithm');
  t.same(loaded.filter((u) => /^lib\/(topology\/schema|config\/topology-schema)\.js$/.test(u)), [], 'neither schema module');
});

t.test('an executor of a shipped ring all-reduce loads no zod: main checked the bench, the algorithm and the kinds', async (t) => {
  // What an executor of `run --bench ccl_allreduce` imports: its entry point, the bench's module (for
  // its spawned worker), the algorithm through the catalog, and the CCL world with every shipped kind.
  const loaded = await modulesLoaded('lib/executor/executor-worker.js', 'benches/ccl_allreduce.js', 'lib/ccl/catalog.js', 'lib/ccl/algorithms/ring_allreduce.js', 'lib/ccl/world.js', 'lib/topology/kind-catalog.js');
  t.ok(loaded.includes('benches/ccl_allreduce.js') && loaded.includes('lib/topology/kinds/fat_tree_2l.js'), 'the hook saw the bench and every kind');
  t.same(loaded.filter((u) => ZOD.test(u)), [], 'no file of zod');
});

t.test("the command line's entry point loads no other command's modules; `run` loads its own only", async (t) => {
  // sweep's CSV writer comes with --csv only.
  const ONLY_ELSEWHERE = /^(bin\/cli\/(sweep|stress|report|info|help)|lib\/bench\/(plots|report|report-script|merge|sweep))\.js$/;
  const atStart = await modulesLoaded('bin/cli.js');
  t.same(atStart.filter((u) => u.startsWith('bin/cli/') && u !== 'bin/cli/table.js'), [], 'no command module before a command runs');
  const forRun = await modulesLoaded('bin/cli.js', 'bin/cli/run.js');
  t.same(forRun.filter((u) => ONLY_ELSEWHERE.test(u)), [], "none of sweep's, stress's, report's, list's or the help text's");
});

t.test('`run` loads zod and yaml as one file each, the bundles of the build, none of their packages\' files (decision 0272)', async (t) => {
  const forRun = await modulesLoaded('bin/cli.js', 'bin/cli/run.js');
  t.same(forRun.filter((u) => ZOD.test(u)), ['lib/vendor/zod.js'], 'zod: its bundle alone');
  t.same(forRun.filter((u) => YAML.test(u)), ['lib/vendor/yaml.js'], 'yaml: its bundle alone');
});

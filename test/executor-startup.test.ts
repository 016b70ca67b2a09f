// Runs on: main thread (tap), and one Worker it starts. Covers: what an executor
// thread loads when it starts: its entry point and what that imports, and no more
// than it needs; and the note a run that starts many of them gets. Each module is loaded again in every isolate, so under
// --threads rank each one is paid once a rank (decision 0130).
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { threadEnv, threadExecArgv } from '../lib/session/thread-flags.js';
import { MANY_THREADS, manyThreadsNote } from '../lib/session/thread-resources.js';

const ENTRY = new URL('../lib/executor/executor-worker.js', import.meta.url).href;

/** The CommonJS module files a fresh thread holds once it has imported the executor's entry point. */
async function commonJsAfterEntry(): Promise<string[]> {
  const code = `
    const { parentPort } = require('node:worker_threads');
    import(${JSON.stringify(ENTRY)}).then(() => parentPort.postMessage(Object.keys(require.cache)), (e) => parentPort.postMessage({ failed: String(e) }));`;
  const w = new Worker(code, { eval: true, execArgv: threadExecArgv(), env: threadEnv() });
  try {
    const reply = await new Promise<unknown>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
    if (!Array.isArray(reply)) throw new Error(`the executor's entry point did not load: ${JSON.stringify(reply)}`);
    return reply as string[];
  } finally {
    await w.terminate();
  }
}

t.test("an executor thread's start-up does not load the YAML parser: only main reads topology and CCL files", async (t) => {
  const files = await commonJsAfterEntry();
  t.same(files.filter((f) => /[\\/]node_modules[\\/]yaml[\\/]/.test(f)), [], 'no file of the yaml package');
});

t.test('a run that starts more than MANY_THREADS executor threads gets a note proposing --threads N; up to that, none', async (t) => {
  t.equal(manyThreadsNote(MANY_THREADS), undefined, `${MANY_THREADS} threads: no note`);
  t.match(manyThreadsNote(MANY_THREADS + 1), new RegExp(`^note: .*starts ${MANY_THREADS + 1} executor threads.*--threads 2`));
});

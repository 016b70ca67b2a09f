// Runs on: main thread (tap), and a Worker it starts. Covers: a bench's options
// given as a function of zod (decision 0228) — built once on main, checked as a
// schema is (ERR_MODULE_DEFINITION), and not built on another thread, where a
// read is ERR_MAIN_THREAD_ONLY.
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { defineBench } from '../lib/bench/define.js';

const run = async (): Promise<never[]> => [];

t.test('options as a function of zod are built on main, once, and checked as a schema is', async (t) => {
  let calls = 0;
  const b = defineBench({
    description: 'd',
    options: (z) => {
      calls++;
      return z.object({ minBytes: z.number().default(8) });
    },
    run,
  });
  t.same(Object.keys(b.options.shape), ['minBytes']);
  t.equal(b.options, b.options, 'the same schema on every read');
  t.equal(calls, 1, 'built once, when defined');
  t.throws(() => defineBench({ description: 'd', options: (z) => z.object({ 'min-bytes': z.number() }), run }), { code: 'ERR_MODULE_DEFINITION', message: /camelCase.*'min-bytes'/ });
});

t.test('on another thread the function is not called, and reading the options is refused', async (t) => {
  const url = new URL('../lib/bench/define.js', import.meta.url).href;
  const code = `
    const { parentPort } = require('node:worker_threads');
    import(${JSON.stringify(url)}).then(({ defineBench }) => {
      let calls = 0;
      const b = defineBench({ description: 'd', options: (z) => { calls++; return z.object({}); }, run: async () => [] });
      let code;
      try { void b.options; } catch (e) { code = e.code; }
      parentPort.postMessage({ calls, code });
    });`;
  const w = new Worker(code, { eval: true });
  const reply = await new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await w.terminate();
  t.same(reply, { calls: 0, code: 'ERR_MAIN_THREAD_ONLY' });
});

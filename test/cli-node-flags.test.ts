// Runs on: main thread (tap). Covers: node's own flags around a run — V8 options
// Workers refuse, and --jitless (no WebAssembly) — must not change its result;
// module hooks in NODE_OPTIONS stay out of kernbench's threads.
// Scheduling jitter and --threads: cli-jitter.test.ts. The flagged runs are real
// processes (the flags are node's); the plain run they are compared with runs
// in-process (runCli).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { execa } from 'execa';
import t from 'tap';
import { threadEnv } from '../lib/session/thread-flags.js';
import { BIN, kernbench, ROOT } from './helpers/cli.js';
import { TestRuntime } from './helpers/run.js';

// The plain --json run, shared by the comparisons below.
const plain = kernbench(['run', '--bench', 'ccl_allreduce', '--json']);

t.test('node flags that Workers refuse (V8 options) do not stop a run: they apply to the process', async (t) => {
  const { exitCode, stdout, stderr } = await execa('node', ['--max-old-space-size=1024', '--stack-trace-limit=20', '--enable-source-maps', BIN, 'run', '--bench', 'ccl_allreduce', '--threads', 'rank'], { reject: false, cwd: ROOT });
  t.equal(exitCode, 0, `exit 0 (stderr: ${String(stderr)})`);
  t.match(String(stdout), /ring_allreduce \(ws=2\): 2 OK/);
});

t.test('without WebAssembly (node --jitless) tiles take the scalar add and the result is the same', async (t) => {
  const jitless = await execa('node', ['--jitless', BIN, 'run', '--bench', 'ccl_allreduce', '--json'], { reject: false, cwd: ROOT });
  t.equal(jitless.exitCode, 0, `exit 0 (stderr: ${String(jitless.stderr)})`);
  const a = JSON.parse(String(jitless.stdout)) as { ok: boolean; digest: string; critNs: number };
  const b = JSON.parse((await plain).stdout) as { ok: boolean; digest: string; critNs: number };
  t.equal(a.ok, true);
  t.same([a.digest, a.critNs], [b.digest, b.critNs], 'same digest and crit_ns as with WebAssembly');
});

t.test('module hooks in NODE_OPTIONS (a test runner\'s --import) do not load into the threads of a run; other options stay', async (t) => {
  const log = join(t.testdir({}), 'loaded');
  const probe = new URL('./fixtures/hook-probe.js', import.meta.url).href;
  const saved = { NODE_OPTIONS: process.env.NODE_OPTIONS, KERNBENCH_TEST_HOOK_PROBE: process.env.KERNBENCH_TEST_HOOK_PROBE };
  process.env.NODE_OPTIONS = `--stack-trace-limit=20 --import=${probe} "--import" "${probe}"`;
  process.env.KERNBENCH_TEST_HOOK_PROBE = log;
  const rt = new TestRuntime();
  try {
    t.same(threadEnv().NODE_OPTIONS, '--stack-trace-limit=20', 'the hooks are dropped, the other option kept');
    // The probe works: a Worker given this environment as it is loads it.
    const bare = new Worker(new URL('data:text/javascript,'), { env: { ...process.env, NODE_OPTIONS: `--import=${probe}` } });
    await new Promise((resolve) => bare.once('exit', resolve));
    t.same(workerLines(log), ['worker'], 'a bare Worker loads the probe');
    const [r] = await rt.bench('ccl_allreduce', { threads: 'rank' });
    t.ok(r.ok, r.lines.join(' | '));
  } finally {
    await rt.close();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  t.same(workerLines(log), ['worker'], 'no executor and not the coordinator loaded it');
});

/** The probe's lines written by threads (a node process started meanwhile would add `main`). */
function workerLines(log: string): string[] {
  return readFileSync(log, 'utf8').split('\n').filter((l) => l === 'worker');
}

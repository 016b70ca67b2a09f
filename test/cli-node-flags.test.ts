// Runs on: main thread (tap). Covers: node's own flags around a run — V8 options
// Workers refuse, and --jitless (no WebAssembly) — must not change its result.
// Scheduling jitter and --threads: cli-jitter.test.ts. The flagged runs are real
// processes (the flags are node's); the plain run they are compared with runs
// in-process (runCli).
import { execa } from 'execa';
import t from 'tap';
import { BIN, kernbench, ROOT } from './helpers/cli.js';

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

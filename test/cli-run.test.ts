// Runs on: main thread (tap). Covers: `kernbench run` — the default run's text
// (golden output), --json and its agreement with the text, --dtype, and --set on
// a CCL field. The default run runs the real binary through execa (exit code 0 of
// the process, the golden output end to end); the rest run in-process (runCli,
// test/helpers/cli.ts), the failing f16 check too: its status is what the binary
// exits with (a process's exit 1 is asserted by stress, the watchdog files and
// never-settled).
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { kernbench, kernbenchProcess, ROOT, type Run } from './helpers/cli.js';

const GOLDEN = join(ROOT, 'test', 'golden', 'ccl_allreduce.default.txt');
// KERNBENCH_UPDATE_GOLDEN=1 rewrites the golden file from this run instead of comparing.
const UPDATE_GOLDEN = process.env.KERNBENCH_UPDATE_GOLDEN === '1';

// The default run is deterministic (virtual time), so several tests share one; likewise its --json.
let defaultRun: Promise<Run> | undefined;
const runDefault = (): Promise<Run> => (defaultRun ??= kernbenchProcess(['run', '--bench', 'ccl_allreduce']));
let jsonRun: Promise<Run> | undefined;
const runJson = (): Promise<Run> => (jsonRun ??= kernbench(['run', '--bench', 'ccl_allreduce', '--json']));

t.test('run --bench ccl_allreduce reports the ring all-reduce OK on 2 ranks with its critical-path time', async (t) => {
  const r = await runDefault();
  t.equal(r.exitCode, 0);
  t.equal(r.stderr, '');
  t.match(r.stdout, /^ {2}ring_allreduce \(ws=2\): 2 OK$/m);
  t.match(r.stdout, /^ {2}crit_ns: \d+\.\d{3} {2}\(topology default, ws=2, n_elem=\d+, f16, digest [0-9a-f]{16}\)$/m);
});

t.test('an f16 all-reduce whose sums pass 2048 fails the exact check and says why; f32 passes', async (t) => {
  const args = ['run', '--bench', 'ccl_allreduce', '--topology', 'ideal', '--set', 'system.sips.count=64', '--threads', '1'];
  const f16 = await kernbench(args);
  const f32 = await kernbench([...args, '--dtype', 'f32']);
  t.equal(f16.exitCode, 1, 'a failed check exits 1');
  t.match(f16.stdout, /^ {2}ring_allreduce \(ws=64\): 0 OK \/ 64 FAIL$/m);
  t.match(f16.stdout, /^ {2}note: f16 holds integers exactly only up to 2048; partial sums here reach 2080, .* \(try --dtype f32\)$/m);
  t.equal(f32.exitCode, 0);
  t.match(f32.stdout, /^ {2}ring_allreduce \(ws=64\): 64 OK$/m);
  t.notMatch(f32.stdout, 'note:', 'no note when the check passes');
});

t.test('run --bench ccl_allreduce prints exactly the golden output', async (t) => {
  const r = await runDefault();
  t.equal(r.exitCode, 0);
  if (UPDATE_GOLDEN) writeFileSync(GOLDEN, r.stdout);
  t.equal(r.stdout, readFileSync(GOLDEN, 'utf8'), `stdout matches ${relative(ROOT, GOLDEN)}`);
});

t.test('run --json prints one JSON object per result line with typed fields', async (t) => {
  const r = await runJson();
  t.equal(r.exitCode, 0);
  const lines = r.stdout.split('\n').filter((line) => line !== '');
  t.equal(lines.length, 1, 'one result, one line');
  const result = JSON.parse(lines[0]) as Record<string, unknown>;
  t.match(result, {
    bench: 'ccl_allreduce',
    algorithm: 'ring_allreduce',
    topology: 'default',
    worldSize: 2,
    nElem: Number,
    dtype: 'f16',
    ok: true,
    critNs: Number,
    digest: /^[0-9a-f]{16}$/,
  });
  t.ok(Number.isInteger(result.nElem) && (result.nElem as number) > 0, 'nElem is a positive integer');
  t.ok((result.critNs as number) > 0, 'critNs is positive');
});

t.test('run --json gives the same digest and critical-path time as the text output', async (t) => {
  const [text, json] = await Promise.all([runDefault(), runJson()]);
  const result = JSON.parse(json.stdout) as { critNs: number; digest: string };
  t.match(text.stdout, `crit_ns: ${result.critNs.toFixed(3)} `);
  t.match(text.stdout, `digest ${result.digest})`);
});

t.test('--set ccl.n_slots=1 still gives a correct all-reduce', async (t) => {
  // One slot forces backpressure on every chunk: the timing changes, the result must not.
  const r = await kernbench(['run', '--bench', 'ccl_allreduce', '--set', 'ccl.n_slots=1']);
  t.equal(r.exitCode, 0);
  t.match(r.stdout, /^ {2}ring_allreduce \(ws=2\): 2 OK$/m);
});

t.test('a run whose flows meet on a shared link runs once and says nothing of it, as a ring run (decision 0100)', async (t) => {
  const tree = await kernbench(['run', '--bench', 'ccl_allreduce', '--algorithm', 'tree_allreduce', '--set', 'system.sips.count=8', '--threads', '1']);
  t.equal(tree.exitCode, 0);
  t.equal(tree.stderr, '', 'no note: no session ran again');
  t.notMatch(tree.stdout, /note:/, 'stdout carries the results only');
  const ring = await kernbench(['run', '--bench', 'ccl_allreduce', '--set', 'system.sips.count=8', '--threads', '1']);
  t.equal(ring.stderr, '');
});

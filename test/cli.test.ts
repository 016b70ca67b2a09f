// Runs on: main thread (tap). Covers: the kernbench command line end to end, run
// through execa as a user runs it — help, list, run (text, golden output, --json),
// validate, --set, and exit code 2 with a one-line-per-problem message and no stack
// for every usage or configuration error.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import t, { type Test } from 'tap';
import { TOPOLOGY_YAML } from './fixtures/topology-text.js';

// This file runs compiled, from dist/test/: the project root is two levels up.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'kernbench.js');
const GOLDEN = join(ROOT, 'test', 'golden', 'ccl_allreduce.default.txt');
// KERNBENCH_UPDATE_GOLDEN=1 rewrites the golden file from this run instead of comparing.
const UPDATE_GOLDEN = process.env.KERNBENCH_UPDATE_GOLDEN === '1';

interface Run {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
}

/** Run `kernbench ...args` from the project root; never throws on a non-zero exit. */
async function kernbench(...args: string[]): Promise<Run> {
  const { exitCode, stdout, stderr } = await execa('node', [BIN, ...args], { reject: false, cwd: ROOT, stripFinalNewline: false });
  return { exitCode, stdout: String(stdout), stderr: String(stderr) };
}

// The default run is deterministic (virtual time), so several tests share one.
let defaultRun: Promise<Run> | undefined;
const runDefault = (): Promise<Run> => (defaultRun ??= kernbench('run', '--bench', 'ccl_allreduce'));

/** A usage or configuration error: exit 2, a message, and no stack trace. */
function assertUsageError(t: Test, r: Run): void {
  t.equal(r.exitCode, 2, 'exits 2');
  t.equal(r.stdout, '', 'prints nothing on stdout');
  t.match(r.stderr, /^kernbench: /, 'stderr starts with kernbench:');
  t.notMatch(r.stderr, '    at ', 'stderr has no stack trace');
}

// The small valid topology, with a SIP count of 0 and an unknown key under cube_mesh.
const BAD_TOPOLOGY = TOPOLOGY_YAML.replace('name: fixture', 'name: bad')
  .replace('    count: 2', '    count: 0')
  .replace('  cube_mesh: {w: 1, h: 1}', '  cube_mesh:\n    w: 1\n    h: 1\n    depth: 2');

t.test('--help exits 0 and lists the run, list and validate commands', async (t) => {
  const r = await kernbench('--help');
  t.equal(r.exitCode, 0);
  for (const command of ['run', 'list', 'validate']) t.match(r.stdout, `kernbench ${command}`, command);
});

t.test('list names the ccl_allreduce bench and every shipped topology', async (t) => {
  const r = await kernbench('list');
  t.equal(r.exitCode, 0);
  const names = r.stdout.split('\n').map((line) => line.trim().split(/\s+/)[0]);
  t.ok(names.includes('ccl_allreduce'), 'ccl_allreduce is listed');
  const topologies = readdirSync(join(ROOT, 'topologies'))
    .filter((f) => f.endsWith('.yaml') && f !== 'ccl.yaml')
    .map((f) => f.slice(0, -'.yaml'.length));
  t.ok(topologies.length > 0, 'topologies/ ships topologies');
  for (const name of topologies) t.ok(names.includes(name), `${name} is listed`);
});

t.test('run --bench ccl_allreduce reports the ring all-reduce OK on 2 ranks with its critical-path time', async (t) => {
  const r = await runDefault();
  t.equal(r.exitCode, 0);
  t.equal(r.stderr, '');
  t.match(r.stdout, /^ {2}ring_allreduce \(ws=2\): 2 OK$/m);
  t.match(r.stdout, /^ {2}crit_ns: \d+\.\d{3} {2}\(topology default, ws=2, n_elem=\d+, f16, digest [0-9a-f]{16}\)$/m);
});

t.test('an f16 all-reduce whose sums pass 2048 fails the exact check and says why; f32 passes', async (t) => {
  const args = ['run', '--bench', 'ccl_allreduce', '--topology', 'ideal', '--set', 'system.sips.count=64', '--threads', '1'];
  const [f16, f32] = await Promise.all([kernbench(...args), kernbench(...args, '--dtype', 'f32')]);
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
  const r = await kernbench('run', '--bench', 'ccl_allreduce', '--json');
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

t.test('node flags that Workers refuse (V8 options) do not stop a run: they apply to the process', async (t) => {
  const { exitCode, stdout, stderr } = await execa('node', ['--max-old-space-size=1024', '--stack-trace-limit=20', '--enable-source-maps', BIN, 'run', '--bench', 'ccl_allreduce', '--threads', 'rank'], { reject: false, cwd: ROOT });
  t.equal(exitCode, 0, `exit 0 (stderr: ${String(stderr)})`);
  t.match(String(stdout), /ring_allreduce \(ws=2\): 2 OK/);
});

t.test('without WebAssembly (node --jitless) tiles take the scalar add and the result is the same', async (t) => {
  const [jitless, plain] = await Promise.all([
    execa('node', ['--jitless', BIN, 'run', '--bench', 'ccl_allreduce', '--json'], { reject: false, cwd: ROOT }),
    kernbench('run', '--bench', 'ccl_allreduce', '--json'),
  ]);
  t.equal(jitless.exitCode, 0, `exit 0 (stderr: ${String(jitless.stderr)})`);
  const a = JSON.parse(String(jitless.stdout)) as { ok: boolean; digest: string; critNs: number };
  const b = JSON.parse(plain.stdout) as { ok: boolean; digest: string; critNs: number };
  t.equal(a.ok, true);
  t.same([a.digest, a.critNs], [b.digest, b.critNs], 'same digest and crit_ns as with WebAssembly');
});

t.test('run --json gives the same digest and critical-path time as the text output', async (t) => {
  const [text, json] = await Promise.all([runDefault(), kernbench('run', '--bench', 'ccl_allreduce', '--json')]);
  const result = JSON.parse(json.stdout) as { critNs: number; digest: string };
  t.match(text.stdout, `crit_ns: ${result.critNs.toFixed(3)} `);
  t.match(text.stdout, `digest ${result.digest})`);
});

t.test('an unknown bench exits 2 and names the known benches', async (t) => {
  const r = await kernbench('run', '--bench', 'nope');
  assertUsageError(t, r);
  t.match(r.stderr, 'ccl_allreduce');
  t.match(r.stderr, "'nope'", 'the message ends with what was received');
});

t.test('an unknown flag exits 2 and names the known flags', async (t) => {
  const r = await kernbench('run', '--bench', 'ccl_allreduce', '--bogus');
  assertUsageError(t, r);
  t.match(r.stderr, '--bogus');
  for (const flag of ['--bench', '--topology', '--ccl', '--algorithm', '--threads', '--dtype', '--set', '--json']) t.match(r.stderr, flag, flag);
});

t.test('a bad topology file exits 2 and reports every problem at file:line:col with its dotted path', async (t) => {
  const file = join(t.testdir({ 'bad.yaml': BAD_TOPOLOGY }), 'bad.yaml');
  const r = await kernbench('run', '--bench', 'ccl_allreduce', '--topology', file);
  assertUsageError(t, r);
  t.match(r.stderr, `${file}:4:12: system.sips.count: `, 'the zero count, at its value');
  t.match(r.stderr, `${file}:10:5: sip.cube_mesh.depth: `, 'the unknown key, at the key');
});

t.test('validate on a bad topology file exits 2 with the same problems', async (t) => {
  const file = join(t.testdir({ 'bad.yaml': BAD_TOPOLOGY }), 'bad.yaml');
  const r = await kernbench('validate', '--topology', file);
  assertUsageError(t, r);
  t.match(r.stderr, `${file}:4:12: system.sips.count: `);
  t.match(r.stderr, `${file}:10:5: sip.cube_mesh.depth: `);
});

t.test('--set ccl.n_slots=1 still gives a correct all-reduce', async (t) => {
  // One slot forces backpressure on every chunk: the timing changes, the result must not.
  const r = await kernbench('run', '--bench', 'ccl_allreduce', '--set', 'ccl.n_slots=1');
  t.equal(r.exitCode, 0);
  t.match(r.stdout, /^ {2}ring_allreduce \(ws=2\): 2 OK$/m);
});

t.test('--set with a value of the wrong type exits 2', async (t) => {
  const r = await kernbench('run', '--bench', 'ccl_allreduce', '--set', 'system.sips.count=abc');
  assertUsageError(t, r);
  t.match(r.stderr, 'system.sips.count');
});

t.test('--threads 0 exits 2', async (t) => {
  assertUsageError(t, await kernbench('run', '--bench', 'ccl_allreduce', '--threads', '0'));
});

t.test('validate exits 0 on every shipped topology with the shipped CCL file', async (t) => {
  const topologies = readdirSync(join(ROOT, 'topologies')).filter((f) => f.endsWith('.yaml') && f !== 'ccl.yaml');
  const runs = await Promise.all(topologies.map((f) => kernbench('validate', '--topology', f.slice(0, -'.yaml'.length))));
  runs.forEach((r, i) => t.same([r.exitCode, r.stderr], [0, ''], topologies[i]));
});

t.test('KERNBENCH_JITTER and --threads change nothing in the JSON result', async (t) => {
  const base = await kernbench('run', '--bench', 'ccl_allreduce', '--json');
  const variants = await Promise.all([
    execa('node', [BIN, 'run', '--bench', 'ccl_allreduce', '--json', '--threads', 'pe'], { reject: false, cwd: ROOT, env: { KERNBENCH_JITTER: '3' } }),
    execa('node', [BIN, 'run', '--bench', 'ccl_allreduce', '--json', '--threads', '1'], { reject: false, cwd: ROOT, env: { KERNBENCH_JITTER: '8' } }),
  ]);
  t.equal(base.exitCode, 0);
  for (const v of variants) {
    t.equal(v.exitCode, 0);
    t.equal(String(v.stdout).trim(), base.stdout.trim());
  }
});

t.test('--trace writes a Chrome trace file and the run still exits by itself', async (t) => {
  const file = `${t.testdir()}/trace.json`;
  const r = await kernbench('run', '--bench', 'ccl_allreduce', '--trace', file);
  t.equal(r.exitCode, 0);
  const { readFileSync } = await import('node:fs');
  const trace = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: { ph: string }[] };
  t.ok(trace.traceEvents.some((e) => e.ph === 'X') && trace.traceEvents.some((e) => e.ph === 's'));
});

t.test('--csv writes a sweep bench\'s table as CSV with the table\'s columns', async (t) => {
  const file = `${t.testdir()}/sweep.csv`;
  const r = await kernbench('run', '--bench', 'allreduce_perf', '--min-bytes', '64', '--max-bytes', '256', '--csv', file);
  t.equal(r.exitCode, 0);
  const { readFileSync } = await import('node:fs');
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  t.equal(lines[0], 'size_bytes,count,type,redop,time_us,algbw_GBs,busbw_GBs,wrong');
  t.same(lines.slice(1).map((l) => l.split(',')[0]), ['64', '128', '256']);
});

t.test('sweep runs the bench at every grid point and prints one row per point, --json one object per row', async (t) => {
  const r = await kernbench('sweep', '--bench', 'ccl_allreduce', '--topology', 'ring_1d_6', '--over', 'ccl.world_size=2,3', '--over', 'ccl.n_elem=8,64', '--json');
  t.equal(r.exitCode, 0);
  const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  t.same(rows.map((x) => [x['ccl.world_size'], x['ccl.n_elem'], x.worldSize, x.nElem, x.ok]), [
    ['2', '8', 2, 8, true],
    ['2', '64', 2, 64, true],
    ['3', '8', 3, 8, true],
    ['3', '64', 3, 64, true],
  ]);
  const single = await kernbench('run', '--bench', 'ccl_allreduce', '--topology', 'ring_1d_6', '--set', 'ccl.world_size=3', '--set', 'ccl.n_elem=64', '--json');
  const one = JSON.parse(single.stdout) as { digest: string; critNs: number };
  t.same([rows[3].digest, rows[3].critNs], [one.digest, one.critNs], 'a sweep point equals the same single run');
});

t.test('sweep without --over, or with a malformed one, exits 2', async (t) => {
  assertUsageError(t, await kernbench('sweep', '--bench', 'ccl_allreduce'));
  assertUsageError(t, await kernbench('sweep', '--bench', 'ccl_allreduce', '--over', 'ccl.n_elem'));
});

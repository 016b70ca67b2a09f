// Runs on: main thread (tap). Covers: `kernbench stress` — the matrix of jitter
// seeds x thread layouts compared with the --threads 1 reference: a deterministic
// bench passes (exit 0, TAP 13 that tap-parser --strict and Perl's prove accept); a bench whose result reads
// wall-clock time diverges (exit 1, every run reported with a `kernbench run`
// line that really reruns it); a deadlock and a hang are reported as such; bad
// flag values are usage errors.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { Parser, type Result } from 'tap-parser';
import t, { type Test } from 'tap';
import { assertUsageError, BIN, kernbench, ROOT, userProject } from './helpers/cli.js';
import { formatTap, parseCount, parseLayouts, parseSeconds, runStress, shellQuote } from '../lib/bench/stress.js';
import { loadBench } from '../lib/bench/registry.js';

const DIR = userProject(t, 'stress-benches');

const result = `{ bench: ctx.bench, algorithm: ctx.ccl.algorithm, topology: torch.topologyName, worldSize: 1, nElem: 1, dtype: 'f64', ok: true, critNs: 0, lines: [] }`;
// Its output is a fresh random number: no two runs share a digest.
writeFileSync(
  join(DIR, 'wallclock.mjs'),
  `import { defineBench } from 'kernbench/bench';
export default defineBench({ description: 'outputs a random number', async run(torch, ctx) {
  return [{ ...${result}, outputs: [new Float64Array([Math.random()])] }];
} });
`,
);
// Every rank receives before it sends: the simulator reports a deadlock.
const fixtures = pathToFileURL(join(ROOT, 'dist', 'test', 'fixtures', 'kernels.js')).href;
writeFileSync(
  join(DIR, 'deadlock.mjs'),
  `import { defineBench } from 'kernbench/bench';
import { deadlockWorker } from '${fixtures}';
export { deadlockWorker };
export default defineBench({ description: 'deadlocks', async run(torch, ctx) {
  await torch.multiprocessing.spawn(deadlockWorker, { nprocs: 3 });
  return [${result}];
} });
`,
);
// Never answers (a bug that hangs without a deadlock the simulator could see).
writeFileSync(
  join(DIR, 'hang.mjs'),
  `import { defineBench } from 'kernbench/bench';
export default defineBench({ description: 'hangs', async run() { await new Promise(() => {}); return []; } });
`,
);

// One cube per SIP: --threads pe runs 8 executors instead of 32.
const SMALL = ['--set', 'ccl.n_elem=64', '--set', 'sip.cube_mesh.w=1', '--set', 'sip.cube_mesh.h=1'];

async function parseTap(text: string): Promise<{ final: { ok: boolean; count: number; pass: number; fail: number; plan: { start: number; end: number } }; asserts: Result[]; version: number | undefined }> {
  const asserts: Result[] = [];
  let version: number | undefined;
  const p = new Parser({ strict: true });
  p.on('assert', (a: Result) => asserts.push(a));
  p.on('version', (v: number) => (version = v));
  const done = new Promise<unknown>((r) => p.on('complete', r));
  p.end(text);
  const final = (await done) as { ok: boolean; count: number; pass: number; fail: number; plan: { start: number; end: number } };
  return { final, asserts, version };
}

/**
 * The two consumers the TAP is written for read `text` as TAP version 13 without a
 * parse error: `tap-parser --strict` (non-TAP lines are failures) and Perl's
 * `prove`, which refuses any version above 13. Both exit 0 exactly when `passing`.
 */
async function consumersAccept(t: Test, text: string, passing: boolean): Promise<void> {
  const parser = await execa(join(ROOT, 'node_modules', '.bin', 'tap-parser'), ['--strict'], { input: text, reject: false });
  t.equal(parser.exitCode, passing ? 0 : 1, `tap-parser --strict exits ${passing ? 0 : 1}`);
  t.notMatch(String(parser.stdout), /tapError: '/, 'tap-parser --strict finds no TAP error');
  const file = join(DIR, `stream-${++streams}.tap`);
  writeFileSync(file, text);
  const prove = await execa('prove', ['--exec', 'cat', file], { reject: false, all: true });
  t.equal(prove.exitCode, passing ? 0 : 1, `prove exits ${passing ? 0 : 1} (output: ${String(prove.all)})`);
  t.notMatch(String(prove.all), 'Parse errors', 'prove finds no parse error');
  t.match(String(prove.all), passing ? /Result: PASS/ : /Failed: [1-9]/, 'prove reads the test points as passing or failing');
}
let streams = 0;

t.test('stress of a deterministic bench runs the reference and every seed under every layout, all the same: TAP 13 with a passing plan, exit 0', async (t) => {
  const r = await kernbench(['stress', '--bench', 'ccl_allreduce', '--seeds', '2', '--threads', '2', '--tap', '--dtype', 'f32', ...SMALL]);
  t.equal(r.exitCode, 0, `exit 0 (stderr: ${r.stderr})`);
  t.equal(r.stderr, '', 'no progress when stderr is not a TTY');
  t.match(r.stdout, /^TAP version 13\n1\.\.3\n/, 'starts with the version line and the plan');
  const { final, asserts, version } = await parseTap(r.stdout);
  t.equal(version, 13);
  t.equal(final.ok, true, 'the TAP parser finds the run passing');
  t.match(final.plan, { start: 1, end: 3 });
  t.equal(final.count, 3, 'one test point per run: the reference plus 2 seeds x 1 layout');
  t.same(asserts.map((a) => a.name), ['reference: --threads 1, no jitter', 'seed 1, --threads 2', 'seed 2, --threads 2']);
  await consumersAccept(t, r.stdout, true);
});

t.test('a bench whose result is random diverges: exit 1, every run but the reference reported with the command that reproduces it', async (t) => {
  const r = await kernbench(['stress', '--bench', './wallclock.mjs', '--seeds', '1', '--threads', '1,rank', '--set', 'ccl.n_slots=2'], { cwd: DIR });
  t.equal(r.exitCode, 1, `exit 1 (stderr: ${r.stderr})`);
  const diverged = r.stdout.split('\n').filter((l) => l.startsWith('DIVERGED: '));
  t.same(diverged, ['DIVERGED: seed 1, --threads 1', 'DIVERGED: seed 1, --threads rank']);
  const commands = [...r.stdout.matchAll(/^ {2}reproduce: (.*)$/gm)].map((m) => m[1]);
  t.same(commands, ['1', 'rank'].map((l) => `KERNBENCH_JITTER=1 kernbench run --bench ./wallclock.mjs --set ccl.n_slots=2 --threads ${l}`));
  t.match(r.stdout, /stress wallclock: 3 runs: 1 same, 2 diverged, 0 deadlocked, 0 failed, 0 timed out: NOT OK\n$/, 'ends with the summary');
  // The command is a real one: a shell runs it (kernbench being this checkout's bin) and it reruns that point.
  const again = await execa(commands[1].replace(' kernbench ', ` ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} `) + ' --json', { shell: true, cwd: DIR, reject: false });
  t.equal(again.exitCode, 0, `the reproduce command runs (stderr: ${String(again.stderr)})`);
  t.match(JSON.parse(String(again.stdout)), { bench: 'wallclock', ok: true }, 'and gives the bench result');
});

t.test('in TAP the divergent runs are not ok with the reproduce command in their YAML diagnostics', async (t) => {
  // In-process (the CLI's part is covered above): the report, then its TAP.
  const report = await runStress(await loadBench(join(DIR, 'wallclock.mjs')), { topology: 'default', ccl: 'default', threads: 1, sets: [], algorithm: undefined, jitterSeed: null }, {
    seeds: 1,
    layouts: ['rank'],
    timeoutMs: 60_000,
    command: (p) => `${p.seed === null ? '' : `KERNBENCH_JITTER=${p.seed} `}kernbench run --bench ./wallclock.mjs --threads ${p.threads}`,
  });
  t.equal(report.ok, false);
  const { final, asserts } = await parseTap(formatTap('wallclock', report));
  t.equal(final.ok, false);
  t.equal(final.fail, 1);
  t.equal(asserts[0].ok, true, 'the reference itself is ok');
  const bad = asserts[1];
  t.equal(bad.ok, false);
  t.equal(bad.name, 'seed 1, --threads rank');
  t.match(bad.diag, { outcome: 'diverged', seed: 1, threads: 'rank', command: 'KERNBENCH_JITTER=1 kernbench run --bench ./wallclock.mjs --threads rank' });
  t.match((bad.diag as { details: string[] }).details[0], /^digest [0-9a-f]{16}, reference [0-9a-f]{16}$/);
  await consumersAccept(t, formatTap('wallclock', report), false);
});

t.test('a deadlock is reported as one, with its code, for the reference and the runs left to compare are skipped', async (t) => {
  const r = await kernbench(['stress', '--bench', './deadlock.mjs', '--topology', 'ring_1d_6', '--seeds', '1', '--threads', 'rank', '--tap'], { cwd: DIR });
  t.equal(r.exitCode, 1);
  const { asserts } = await parseTap(r.stdout);
  t.equal(asserts[0].ok, false);
  t.match(asserts[0].diag, { outcome: 'deadlock', code: 'ERR_DEADLOCK', command: 'kernbench run --bench ./deadlock.mjs --topology ring_1d_6 --threads 1' });
  t.equal(asserts[1].skip !== false, true, 'the seeded run is skipped: there is no reference to compare with');
  await consumersAccept(t, r.stdout, false);
});

t.test('a run that outlives --timeout is reported as timed out, and stress still finishes', async (t) => {
  const r = await kernbench(['stress', '--bench', './hang.mjs', '--seeds', '1', '--threads', '1', '--timeout', '1'], { cwd: DIR });
  t.equal(r.timedOut, false, 'stress answers');
  t.equal(r.exitCode, 1);
  t.match(r.stdout, /^TIMEOUT: reference: --threads 1, no jitter\n {2}no answer within 1 s\n {2}reproduce: kernbench run --bench \.\/hang\.mjs --threads 1\n/);
});

t.test('stress --seeds 0 is a usage error (exit 2, one line)', async (t) => {
  assertUsageError(t, await kernbench(['stress', '--bench', 'ccl_allreduce', '--seeds', '0']), 'ERR_INVALID_FLAG_VALUE');
});

t.test('bad --seeds, --threads and --timeout values are refused (ERR_INVALID_FLAG_VALUE, ERR_INVALID_THREADS)', async (t) => {
  for (const v of ['0', '1.5', '-2', '1e3', '']) t.throws(() => parseCount('seeds', v), { code: 'ERR_INVALID_FLAG_VALUE' }, `--seeds '${v}'`);
  for (const v of ['rank,rank', 'rank,', '1,0', 'ranks', '']) t.throws(() => parseLayouts(v), { code: 'ERR_INVALID_THREADS' }, `--threads '${v}'`);
  for (const v of ['-1', '0', 'soon', '', '1s']) t.throws(() => parseSeconds('timeout', v), { code: 'ERR_INVALID_FLAG_VALUE' }, `--timeout '${v}'`);
  t.same(parseLayouts('1,rank,pe,2'), [1, 'rank', 'pe', 2], 'a good list is read in order');
  t.equal(parseSeconds('timeout', '0.5'), 0.5);
});

t.test('a reproduce command quotes for the shell any word it would otherwise split or expand', async (t) => {
  t.equal(shellQuote('--set'), '--set');
  t.equal(shellQuote('ccl.n_slots=2'), 'ccl.n_slots=2');
  t.equal(shellQuote("it's a $path"), `'it'\\''s a $path'`);
  const echoed = await execa('sh', ['-c', `printf %s ${shellQuote("it's a $path; ls *")}`]);
  t.equal(String(echoed.stdout), "it's a $path; ls *", 'the shell reads the quoted word back unchanged');
});

// Runs on: main thread (tap). Covers: the CLI habits of issue 27 — the version in
// JSON, CSV and trace output; --json's fixed shape, checked against the committed
// JSON Schema; a mistyped --topology listing the known ones; --csv refused before
// the run for a bench without a table; and progress on stderr only when it is a
// terminal, every line erased before the results.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { z } from 'zod';
import { main } from '../bin/cli.js';
import { RUN_RESULT_SCHEMA_FILE, runResultSchemaText } from '../bin/cli/json-result.js';
import { topologyPath, VERSION } from '../lib/config/paths.js';
import { assertUsageError, kernbench, kernbenchProcess, ROOT } from './helpers/cli.js';

const FAKE_TTY = ['--import', join(ROOT, 'dist', 'test', 'fixtures', 'fake-tty.js')];

t.test('the committed schemas/run-result.schema.json is the one the code declares', async (t) => {
  t.equal(readFileSync(RUN_RESULT_SCHEMA_FILE, 'utf8'), runResultSchemaText(), 'up to date (node dist/bin/cli/json-result.js rewrites it)');
});

t.test('run --json lines have the schema\'s fixed shape: version, bench extras under extra, table cells that are numerals as numbers', async (t) => {
  const schema = z.fromJSONSchema(JSON.parse(readFileSync(RUN_RESULT_SCHEMA_FILE, 'utf8')) as Parameters<typeof z.fromJSONSchema>[0]);
  const runs = [
    ['run', '--bench', 'ccl_allreduce', '--json'],
    ['run', '--bench', 'allreduce_perf', '--min-bytes', '64', '--max-bytes', '128', '--json'],
    ['run', '--bench', 'gemm_single_pe', '--json'],
  ];
  const keys = new Set<string>();
  for (const args of runs) {
    const r = await kernbench(args);
    t.equal(r.exitCode, 0, `${args[2]}: exit 0 (stderr: ${r.stderr})`);
    for (const line of r.stdout.trim().split('\n')) {
      const x = JSON.parse(line) as Record<string, unknown>;
      const checked = schema.safeParse(x);
      t.ok(checked.success, `${args[2]}: the line validates against the JSON Schema${checked.success ? '' : `: ${JSON.stringify(checked.error.issues)}`}`);
      t.equal(x.version, VERSION, `${args[2]}: version`);
      keys.add(Object.keys(x).join(','));
      const table = x.table as { rows: unknown[][] } | null;
      if (args[2] === 'allreduce_perf') t.ok(table !== null && table.rows.every((row) => typeof row[0] === 'number' && typeof row[4] === 'number'), 'allreduce_perf: sizes and times are numbers');
    }
  }
  t.equal(keys.size, 1, `every bench's lines have the same keys in the same order: ${[...keys].join(' | ')}`);
  const bad = schema.safeParse({ ...(JSON.parse((await kernbench(['run', '--bench', 'ccl_allreduce', '--json'])).stdout) as object), busbw: 1 });
  t.equal(bad.success, false, 'a key beside the fixed ones does not validate: extras go under extra');
});

t.test('--trace records the version in the trace\'s otherData; sweep --json and --csv rows end with it', async (t) => {
  const trace = join(t.testdir(), 'trace.json');
  t.equal((await kernbench(['run', '--bench', 'ccl_allreduce', '--trace', trace])).exitCode, 0);
  t.same((JSON.parse(readFileSync(trace, 'utf8')) as { otherData: unknown }).otherData, { kernbench_version: VERSION });
  const csv = join(t.testdir(), 'sweep.csv');
  const r = await kernbench(['sweep', '--bench', 'ccl_allreduce', '--over', 'ccl.n_elem=8,64', '--json', '--csv', csv]);
  t.equal(r.exitCode, 0);
  for (const line of r.stdout.trim().split('\n')) t.equal((JSON.parse(line) as { kernbench_version: string }).kernbench_version, VERSION);
  const lines = readFileSync(csv, 'utf8').trim().split('\n');
  t.match(lines[0], /,kernbench_version$/);
  t.ok(lines.slice(1).every((l) => l.endsWith(`,${VERSION}`)));
});

t.test('a mistyped --topology is refused with the known topologies (ERR_UNKNOWN_TOPOLOGY), not a missing file', async (t) => {
  t.throws(() => topologyPath('ring_1d_7'), { code: 'ERR_UNKNOWN_TOPOLOGY' });
  await t.rejects(main(['validate', '--topology', 'torus_2d_2x4']), { code: 'ERR_UNKNOWN_TOPOLOGY' });
  for (const command of [['run', '--bench', 'ccl_allreduce'], ['validate']]) {
    const r = await kernbench([...command, '--topology', 'torus_2d_2x4']);
    assertUsageError(t, r, 'ERR_UNKNOWN_TOPOLOGY');
    for (const known of ['torus_2d_2x3', 'ring_1d_6', 'ideal']) t.match(r.stderr, known, `${command[0]}: lists ${known}`);
    t.match(r.stderr, /got 'torus_2d_2x4'\n$/);
    t.notMatch(r.stderr, 'ENOENT');
  }
});

t.test('--csv on a bench without a table is refused before the run (ERR_NO_TABLE), and no file is written', async (t) => {
  const file = join(t.testdir(), 'none.csv');
  await t.rejects(main(['run', '--bench', 'ccl_allreduce', '--csv', file]), { code: 'ERR_NO_TABLE' });
  const r = await kernbench(['run', '--bench', 'ccl_allreduce', '--csv', file]);
  assertUsageError(t, r, 'ERR_NO_TABLE');
  t.notOk(existsSync(file), 'no file');
});

t.test('sweep progress on a terminal: one line per point, each erasing the last, the last erased before the table', async (t) => {
  const r = await kernbenchProcess(['sweep', '--bench', 'ccl_allreduce', '--over', 'ccl.n_elem=8,64'], { nodeFlags: FAKE_TTY });
  t.equal(r.exitCode, 0, r.stderr);
  t.equal(r.stderr, '\r\x1b[K  [1/2] ccl.n_elem=8\r\x1b[K  [2/2] ccl.n_elem=64\r\x1b[K', 'no stale characters, no line left above the table');
  t.match(r.stdout, /^ +ccl\.n_elem +algorithm/, 'the table starts at the top of stdout');
});

t.test('a long run shows its progress on a terminal (virtual time, messages, ranks done) and erases it; nothing when stderr is not one', async (t) => {
  // --threads 1: the frames come from the main thread whatever the layout, and one executor
  // starts in each of the two processes instead of six.
  const args = ['run', '--bench', 'ccl_allreduce', '--topology', 'ring_1d_6', '--set', 'ccl.n_elem=262144', '--no-data', '--threads', '1'];
  // A frame every millisecond: the run shows frames however fast this machine is.
  const env = { KERNBENCH_PROGRESS_MS: '1' };
  const [tty, piped] = [await kernbenchProcess(args, { nodeFlags: FAKE_TTY, env }), await kernbenchProcess(args, { env })];
  t.equal(tty.exitCode, 0, tty.stderr);
  t.equal(piped.stdout, tty.stdout, 'the same results either way');
  t.equal(piped.stderr, '', 'not a terminal: silent');
  const frames = tty.stderr.split('\r\x1b[K');
  t.equal(frames[0], '', 'every frame starts by erasing the line');
  t.equal(frames[frames.length - 1], '', 'the last line is erased before the results');
  const shown = frames.slice(1, -1);
  t.ok(shown.length > 0, `${shown.length} progress frame(s)`);
  for (const f of shown) t.match(f, /^ {2}running: virtual time \d+\.\d{3} us, \d+ messages, \d+ ranks? done$/, `frame '${f}'`);
  t.notMatch(tty.stderr, '\n', 'no line feed: the progress never scrolls the terminal');
});

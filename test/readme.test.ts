// Runs on: main thread (tap). Covers: what the README quotes of the tool is what the
// tool prints today (STYLE 16). The README's `$ node bin/kernbench.js ...` transcripts
// that start no threads (--help, list, validate, errors with their file:line:col) run
// here, in-process, and their quoted lines are compared with the output; the ones that
// run a simulation are test/readme-runs.test.ts. Also: the README's bench table and its
// list of sweep benches against benches/.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from './helpers/cli.js';
import { checkTranscripts, matches, README, startsThreads, transcripts } from './helpers/readme.js';

t.test('the transcript reader and the matcher', async (t) => {
  const md = ['```', '$ KERNBENCH_JITTER=7 node bin/kernbench.js run --bench b', 'out 1', '', '$ node bin/kernbench.js list', 'a', '...', 'z', '```', '$ node bin/kernbench.js not-in-a-block'].join('\n');
  t.same(transcripts(md), [
    { line: 2, env: { KERNBENCH_JITTER: '7' }, args: ['run', '--bench', 'b'], expected: ['out 1'] },
    { line: 5, env: {}, args: ['list'], expected: ['a', '...', 'z'] },
  ]);
  t.ok(matches(['a', '...', 'z'], ['a', 'b', 'c', 'z']));
  t.ok(matches(['a', '...', 'z'], ['a', 'z']));
  t.ok(matches(['a', '  ...', 'z'], ['a', 'b', 'z']), 'an indented ... too');
  t.notOk(matches(['a', '...', 'z'], ['a', 'b']));
  t.notOk(matches(['a', 'z'], ['a', 'b', 'z']));
});

t.test('the README quotes the tool: each transcript that starts no threads prints the lines quoted', async (t) => {
  const list = transcripts(README).filter((tr) => !startsThreads(tr));
  t.ok(list.length >= 5, `found the transcripts (${list.length})`);
  await checkTranscripts(t, list);
});

// --- The bench lists -------------------------------------------------------

const BENCHES = readdirSync(join(ROOT, 'benches'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3))
  .sort();

t.test("the README's bench table has a row for every bench in benches/, and only for those", async (t) => {
  const section = README.slice(README.indexOf('## Benches'), README.indexOf('\n## ', README.indexOf('## Benches') + 1));
  const named = section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split(' | ')[0].matchAll(/`(\w+)`/g)].map((m) => m[1]));
  t.same([...named].sort(), BENCHES);
});

t.test("the README's sweep benches are the benches that declare a table (what --csv writes)", async (t) => {
  // A bench declares its table in defineBench ({ table: true }); --csv is refused before the run otherwise.
  const withTable: string[] = [];
  for (const b of BENCHES) {
    const m = (await import(join(ROOT, 'dist', 'benches', `${b}.js`))) as { default?: { table?: boolean } };
    if (m.default?.table === true) withTable.push(b);
  }
  const row = README.split('\n').find((l) => l.startsWith('| `--csv FILE` |')) ?? '';
  const listed = /sweep bench's table \(([^)]*)\)/.exec(row)?.[1] ?? '';
  t.same([...listed.matchAll(/`(\w+)`/g)].map((m) => m[1]).sort(), withTable);
});

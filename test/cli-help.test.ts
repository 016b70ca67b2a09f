// Runs on: main thread (tap). Covers: the help of every command and --version,
// all derived from the one table of bin/cli/table.ts: `kernbench COMMAND --help`
// exits 0 and describes that command (its synopsis and each flag it takes, no
// other command's), and --version prints package.json's version.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { COMMANDS, type CommandName } from '../bin/cli/table.js';
import { kernbench, kernbenchProcess, ROOT } from './helpers/cli.js';

const commands = Object.keys(COMMANDS) as CommandName[];

t.test('the table declares the seven commands', async (t) => {
  t.same(commands, ['run', 'sweep', 'stress', 'merge', 'report', 'list', 'validate']);
});

for (const name of commands) {
  t.test(`kernbench ${name} --help exits 0 and describes ${name}: its usage and every flag it takes`, async (t) => {
    const r = await kernbench([name, '--help']);
    t.equal(r.exitCode, 0, `exit 0 (stderr: ${r.stderr})`);
    t.equal(r.stderr, '');
    t.match(r.stdout, new RegExp(`^kernbench ${name} — ${COMMANDS[name].summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`), 'starts with the command and what it does');
    t.match(r.stdout, `\nUsage:\n  kernbench ${name}`, 'its synopsis');
    for (const flag of COMMANDS[name].flags) t.match(r.stdout, new RegExp(`^ +(-h, )?--${flag}\\b`, 'm'), `--${flag}`);
    for (const other of commands.filter((c) => c !== name)) t.notMatch(r.stdout, `kernbench ${other} `, `not ${other}'s help`);
    const h = await kernbench([name, '-h']);
    t.equal(h.stdout, r.stdout, '-h is --help');
    const viaHelp = await kernbench(['help', name]);
    t.equal(viaHelp.stdout, r.stdout, `'kernbench help ${name}' prints the same`);
  });
}

t.test('a flag another command takes is not in a command\'s help (list takes only --help)', async (t) => {
  const r = await kernbench(['list', '--help']);
  t.notMatch(r.stdout, '--bench');
  t.notMatch(r.stdout, 'known flags');
});

t.test('kernbench --help lists every command with its summary and exits 0', async (t) => {
  const r = await kernbench(['--help']);
  t.equal(r.exitCode, 0);
  for (const name of commands) t.match(r.stdout, `kernbench ${name}`, name);
  t.match(r.stdout, 'kernbench --version');
});

t.test('--version prints the version of package.json, from the installed binary too', async (t) => {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const r = await kernbenchProcess(['--version']);
  t.equal(r.exitCode, 0);
  t.equal(r.stdout, `${version}\n`);
  t.equal((await kernbench(['-V'])).stdout, `${version}\n`, '-V too');
});

t.test('run --bench B --help is the bench\'s help and names the command\'s own', async (t) => {
  const r = await kernbench(['sweep', '--bench', 'sim_throughput', '--help']);
  t.equal(r.exitCode, 0);
  t.match(r.stdout, /^kernbench sweep --bench sim_throughput /);
  t.match(r.stdout, /--sizes S +ring sizes .*\(default: 8,64,256\)/, 'the bench option that replaced KERNBENCH_SIM_SIZES, with its default');
  t.match(r.stdout, 'kernbench sweep --help');
});

// Runs on: main. Owns: the text of `kernbench --help`, `kernbench COMMAND --help`,
// `kernbench COMMAND --bench B --help` and `--version`, all rendered from the
// tables of ./table.ts and the bench's options schema: no help text is written
// by hand a second time.
import { VERSION } from '../../lib/config/paths.js';
import { optionInfos, optionsHelp } from '../../lib/bench/options.js';
import type { LoadedBench } from '../../lib/bench/registry.js';
import { COMMANDS, FLAGS, type CommandName, type CommandSpec, type FlagName, type FlagSpec } from './table.js';

const TITLE = 'kernbench — a deterministic, multi-threaded simulator of a multi-chip AI accelerator';

/** What `--version` prints. */
export function versionText(): string {
  return `${VERSION}\n`;
}

/** `kernbench --help`: every command with its summary, and where each command's own help is. */
export function globalHelp(): string {
  const names = Object.keys(COMMANDS) as CommandName[];
  const rows: [string, string][] = [...names.map((n): [string, string] => [n, COMMANDS[n].summary]), ['COMMAND --help', "a command's usage and options"], ['--version', 'the version'], ['--help', 'this help']];
  const width = Math.max(...rows.map(([n]) => n.length));
  const lines = [
    `${TITLE} (version ${VERSION})`,
    '',
    'Usage:',
    ...rows.map(([n, what]) => `  kernbench ${n.padEnd(width)}  ${what}`),
    '',
    "Start with 'kernbench list', then 'kernbench run --bench ccl_allreduce'.",
  ];
  return `${lines.join('\n')}\n`;
}

/** Help lines for `flags`: the flag and its value hint, then its help (continuation lines aligned). */
function flagLines(flags: readonly FlagName[], notes: Partial<Record<FlagName, string>>): string[] {
  const heads = flags.map((f) => {
    const spec: FlagSpec = FLAGS[f];
    return `${spec.short ? `-${spec.short}, ` : ''}--${f}${spec.value ? ` ${spec.value}` : ''}`;
  });
  const width = Math.max(...heads.map((h) => h.length));
  return flags.flatMap((f, i) => {
    const help: string = notes[f] ?? FLAGS[f].help;
    const [first, ...rest] = help.split('\n');
    return [`  ${heads[i].padEnd(width)}  ${first}`, ...rest.map((r) => `  ${' '.repeat(width)}  ${r}`)];
  });
}

/** `kernbench COMMAND --help`: what the command does, its synopsis and its flags. */
export function commandHelp(name: CommandName): string {
  const c: CommandSpec = COMMANDS[name];
  const lines = [
    `kernbench ${name} — ${c.summary}`,
    '',
    'Usage:',
    ...c.usage.map((u) => `  kernbench ${name}${u ? ` ${u}` : ''}`),
    '',
    'Options:',
    ...flagLines(c.flags, c.notes ?? {}),
    ...(c.more ?? []).flatMap((p) => ['', p]),
  ];
  return `${lines.join('\n')}\n`;
}

/** `kernbench COMMAND --bench B --help`: the bench's description and its options with their defaults. */
export function benchHelp(command: CommandName, loaded: LoadedBench): string {
  const infos = optionInfos(loaded.bench.options);
  const lines = [
    `kernbench ${command} --bench ${loaded.name} [options] [bench options]`,
    `  ${loaded.bench.description}`,
    '',
    `Options of ${loaded.name}:`,
    ...(infos.length > 0 ? optionsHelp(infos) : ['  (none)']),
    '',
    `Options of ${command} (--topology, --threads, --set, ...): kernbench ${command} --help`,
  ];
  return `${lines.join('\n')}\n`;
}

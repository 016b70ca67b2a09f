// Runs on: main. Owns: turning a command's argv into values — against the flags
// ./table.ts gives that command, plus, for the commands that load a bench, the
// bench's own flags from its options schema — with every unknown flag or stray
// argument a usage error that names the known flags.
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { KernbenchError } from '../../lib/errors.js';
import { optionInfos } from '../../lib/bench/options.js';
import { listBenches, loadBench, type LoadedBench } from '../../lib/bench/registry.js';
import { COMMANDS, FLAGS, type BenchCommand, type CommandName, type FlagSpec } from './table.js';

type FlagTable = Record<string, Pick<FlagSpec, 'type' | 'multiple' | 'short'>>;
export type Values = Partial<Record<string, string | string[] | boolean>>;

export interface Parsed {
  values: Values;
  positionals: string[];
}

/** The parser's table of command `name`: its flags from FLAGS, nothing else. */
function commandTable(name: CommandName): FlagTable {
  return Object.fromEntries(COMMANDS[name].flags.map((f) => [f, flagEntry(FLAGS[f])]));
}

function flagEntry(spec: FlagSpec): FlagTable[string] {
  return { type: spec.type, ...(spec.multiple ? { multiple: true } : {}), ...(spec.short ? { short: spec.short } : {}) };
}

/** Parse `args` for command `name` (a command that loads no bench). */
export function parseCommand(name: CommandName, args: string[]): Parsed {
  return parseFlags(args, commandTable(name), 'positionals' in COMMANDS[name]);
}

/** Parse `args` against `table` (strict: an unknown flag or a stray argument is a usage error naming the known flags). */
function parseFlags(args: string[], table: FlagTable, positionals = false): Parsed {
  try {
    const r = parseArgs({ args: joinDashValues(args, table), options: table, strict: true, allowPositionals: positionals });
    return { values: r.values as Values, positionals: r.positionals };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const flags = Object.keys(table).map((k) => `--${k}`).join(', ');
    const quoted = /'([^']*)'/.exec(err.message)?.[1] ?? '';
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new KernbenchError('ERR_UNKNOWN_FLAG', `unknown flag; known flags: ${flags}, got '${quoted}'`);
    if (err.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new KernbenchError('ERR_UNEXPECTED_ARGUMENT', `unexpected argument (flags are --name value); known flags: ${flags}, got '${quoted}'`);
    const first = err.message.split('\n')[0].replace(/\. (To specify|Did you).*$/s, '');
    throw new KernbenchError('ERR_INVALID_FLAG_VALUE', `${first}; known flags: ${flags}`);
  }
}

/**
 * `--threads -1` as `--threads=-1`: a value that starts with a dash and a digit is
 * the flag's value (a negative number to refuse with the flag's own message), not a
 * flag; node's parser would otherwise call it ambiguous.
 */
function joinDashValues(args: string[], table: FlagTable): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const takesValue = a.startsWith('--') && !a.includes('=') && table[a.slice(2)]?.type === 'string';
    if (takesValue && i + 1 < args.length && /^-[\d.]/.test(args[i + 1])) {
      out.push(`${a}=${args[i + 1]}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** The value of --bench (and whether --help was given) before the bench's own flags are known. */
export function prescan(args: string[]): { bench: string | undefined; help: boolean; timeout: string | undefined } {
  let bench: string | undefined;
  let help = false;
  // --timeout too: it must hold while the bench module loads (an endless loop at import).
  let timeout: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--bench') bench = args[++i];
    else if (args[i].startsWith('--bench=')) bench = args[i].slice('--bench='.length);
    else if (args[i] === '--timeout') timeout = args[++i];
    else if (args[i].startsWith('--timeout=')) timeout = args[i].slice('--timeout='.length);
    else if (args[i] === '--help' || args[i] === '-h') help = true;
    else if (args[i] === '--') break;
  }
  return { bench, help, timeout };
}

export interface BenchArgs {
  loaded: LoadedBench;
  values: Values;
  /** The bench's options as given on the command line, by field name. */
  options: Record<string, string | boolean>;
}

/**
 * Load the bench named by --bench and parse `args` against command `name`'s flags
 * plus the bench's own (from its options schema). 'help': --help without --bench.
 */
export async function parseBenchArgs(name: BenchCommand, args: string[]): Promise<BenchArgs | 'help'> {
  const { bench, help } = prescan(args);
  if (bench === undefined || bench === '') {
    if (help) return 'help';
    throw new KernbenchError('ERR_MISSING_ARGUMENT', `${name} needs --bench NAME or --bench PATH; known: ${listBenches().join(', ')}, got none`);
  }
  const loaded = await loadBench(bench); // unknown bench or broken module: refused before any thread starts
  const infos = optionInfos(loaded.bench.options);
  const table = commandTable(name);
  for (const o of infos) {
    if (Object.hasOwn(FLAGS, o.flag)) {
      throw new KernbenchError('ERR_MODULE_DEFINITION', `${benchFile(loaded)}: option '${o.field}' would be the flag --${o.flag}, which is kernbench's own; rename it, got '${o.field}'`);
    }
    table[o.flag] = { type: o.kind === 'boolean' ? 'boolean' : 'string' };
  }
  const { values } = parseFlags(args, table);
  const options: Record<string, string | boolean> = {};
  for (const o of infos) {
    const v = values[o.flag];
    if (typeof v === 'string' || typeof v === 'boolean') options[o.field] = v;
  }
  return { loaded, values, options };
}

function benchFile(loaded: LoadedBench): string {
  return loaded.url.startsWith('file:') ? fileURLToPath(loaded.url) : loaded.url;
}

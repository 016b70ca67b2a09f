// Runs on: main. Owns: a bench's options as the command line sees them — the
// flag of each schema field (camelCase `minBytes` <-> `--min-bytes`), what kind
// of value it takes, its description and default (for --help and `kernbench
// list`), and turning given values (text from argv, or typed values from code)
// into the schema's output, with every bad value an ERR_INVALID_BENCH_OPTION
// naming the flag and the value received (an unknown name: ERR_UNKNOWN_FLAG).
//
// Everything here is derived from the schema through z.toJSONSchema, zod's
// public introspection: no second description of an option exists to drift.
import { z } from 'zod';
import { KernbenchError } from '../errors.js';
import { intList as intListOf, type BenchOptionsSchema } from './define.js';

export { BYTE_SIZE } from './define.js';

/** What kind of value a flag takes on the command line ('bytes': an integer, optionally with a K, M or G suffix). */
export type OptionKind = 'boolean' | 'integer' | 'bytes' | 'number' | 'enum' | 'string';

const SIZE_TEXT = /^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?([kmg]?)$/i;
const UNIT: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/**
 * A byte count as nccl-tests reads -b/-e: a number with an optional K, M or G
 * suffix (powers of 1024, either case). undefined when the text is not one, or
 * not a whole number of bytes.
 */
export function parseByteSize(text: string): number | undefined {
  const m = SIZE_TEXT.exec(text.trim());
  if (!m) return undefined;
  const bytes = Number(`${m[1]}${m[2] ?? ''}`) * UNIT[m[3].toLowerCase()];
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

export interface OptionInfo {
  /** The schema field, camelCase. */
  field: string;
  /** The flag without its dashes, kebab-case. */
  flag: string;
  kind: OptionKind;
  /** The choices of an enum. */
  values?: string[];
  description?: string;
  /** The default (absent when the field has none). */
  default?: unknown;
  /** Must be given (no default, not optional). */
  required: boolean;
}

/** `minBytes` -> `min-bytes`. */
export function flagName(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** `min-bytes` -> `minBytes` (a camelCase name is returned as it is). */
export function fieldName(flagOrField: string): string {
  return flagOrField.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

interface JsonField {
  type?: string | string[];
  byteSize?: boolean;
  enum?: unknown[];
  description?: string;
  default?: unknown;
}

const infoCache = new WeakMap<BenchOptionsSchema, OptionInfo[]>();

/** The options of `schema`, in declaration order. */
export function optionInfos(schema: BenchOptionsSchema): OptionInfo[] {
  const cached = infoCache.get(schema);
  if (cached) return cached;
  // io 'input': what a caller gives (fields with a default are optional there).
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, JsonField>; required?: string[] };
  const required = new Set(json.required ?? []);
  const infos = Object.keys(schema.shape).map((field): OptionInfo => {
    const p = json.properties?.[field] ?? {};
    const kind: OptionKind = p.enum ? 'enum' : p.type === 'boolean' ? 'boolean' : p.type === 'integer' ? (p.byteSize === true ? 'bytes' : 'integer') : p.type === 'number' ? 'number' : 'string';
    return {
      field,
      flag: flagName(field),
      kind,
      ...(p.enum ? { values: p.enum.map(String) } : {}),
      ...(p.description !== undefined ? { description: p.description } : {}),
      ...('default' in p ? { default: p.default } : {}),
      required: required.has(field),
    };
  });
  infoCache.set(schema, infos);
  return infos;
}

/** How a flag's value is written in help: N (integer), X (number), a|b|c (enum), S (string), nothing (a switch). */
export function valueHint(o: OptionInfo): string {
  switch (o.kind) {
    case 'boolean':
      return '';
    case 'integer':
      return 'N';
    case 'bytes':
      return 'N[K|M|G]';
    case 'number':
      return 'X';
    case 'enum':
      return (o.values ?? []).join('|');
    case 'string':
      return 'S';
  }
}

/** Help lines for `options`: `  --min-bytes N   smallest size (default: 8)`. */
export function optionsHelp(options: readonly OptionInfo[], indent = '  '): string[] {
  const heads = options.map((o) => `--${o.flag}${o.kind === 'boolean' ? '' : ` ${valueHint(o)}`}`);
  const width = Math.max(0, ...heads.map((h) => h.length));
  return options.map((o, i) => {
    const notes = [o.description ?? '', o.required ? '(required)' : 'default' in o ? `(default: ${formatValue(o.default)})` : ''].filter((x) => x !== '');
    return `${indent}${heads[i].padEnd(width)}  ${notes.join(' ')}`.trimEnd();
  });
}

function formatValue(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * A bench option's schema for integers written `8,64,256` on the command line
 * (`--sizes 8,64`), each at least `min`. Give it a default written the same way
 * with `.prefault('8,64,256')` (help shows it as written), or `.optional()`.
 */
export function intList(min: number) {
  return intListOf(z, min);
}

/** A number as written on a command line: decimal or scientific notation; no hex, no Infinity, no blanks. */
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * The schema's output for `given` (field or flag names; text or typed values),
 * defaults applied. Throws ERR_INVALID_BENCH_OPTION naming the flag and the value
 * received, ERR_UNKNOWN_FLAG for a name the schema does not have.
 */
export function parseBenchOptions<S extends BenchOptionsSchema>(bench: string, schema: S, given: Record<string, unknown>): z.output<S> {
  const infos = optionInfos(schema);
  const byField = new Map(infos.map((o) => [o.field, o]));
  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined) continue;
    const field = fieldName(name);
    const info = byField.get(field);
    if (!info) {
      const known = infos.map((o) => `--${o.flag}`).join(', ') || 'none';
      throw new KernbenchError('ERR_UNKNOWN_FLAG', `${bench}: unknown option; its options are: ${known}, got '${name}'`);
    }
    input[field] = typeof value === 'string' ? fromText(bench, info, value) : value;
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data as z.output<S>;
  const issue = result.error.issues[0];
  const field = issue.path.length > 0 ? String(issue.path[0]) : undefined;
  const info = field === undefined ? undefined : byField.get(field);
  if (info) {
    const got = field !== undefined && field in given ? given[field] : given[info.flag];
    const received = got === undefined ? 'nothing' : `'${String(got)}'`;
    throw new KernbenchError('ERR_INVALID_BENCH_OPTION', `${bench}: --${info.flag}: ${issue.message}, got ${received}`);
  }
  // A check across fields (a refinement on the object): its message names the flags; show their values.
  const named = [...new Set([...issue.message.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1]))];
  const values = named
    .map((flag) => infos.find((o) => o.flag === flag))
    .filter((o): o is OptionInfo => o !== undefined)
    .map((o) => `--${o.flag} ${formatValue(o.field in input ? input[o.field] : o.default)}`);
  throw new KernbenchError('ERR_INVALID_BENCH_OPTION', `${bench}: ${issue.message}, got ${values.length > 0 ? values.join(', ') : JSON.stringify(given)}`);
}

/** A value given as text (argv): numbers parsed strictly, switches from true/false; the schema checks the rest. */
function fromText(bench: string, o: OptionInfo, text: string): unknown {
  switch (o.kind) {
    case 'bytes': {
      const bytes = parseByteSize(text);
      if (bytes === undefined) throw new KernbenchError('ERR_INVALID_BENCH_OPTION', `${bench}: --${o.flag} takes a whole number of bytes, with an optional K, M or G suffix (x1024), got '${text}'`);
      return bytes;
    }
    case 'integer':
    case 'number':
      if (!NUMBER_TEXT.test(text)) throw new KernbenchError('ERR_INVALID_BENCH_OPTION', `${bench}: --${o.flag} takes ${o.kind === 'integer' ? 'an integer' : 'a number'} (decimal or scientific notation), got '${text}'`);
      return Number(text);
    case 'boolean':
      if (text === 'true') return true;
      if (text === 'false') return false;
      throw new KernbenchError('ERR_INVALID_BENCH_OPTION', `${bench}: --${o.flag} is a switch (true or false), got '${text}'`);
    default:
      return text;
  }
}

// Runs on: main thread. Owns: turning zod issues into ConfigProblems whose
// messages read well and end with what was received (`expected a positive
// integer, got 0`, `expected one of ring_1d|torus_2d|mesh_2d_no_wrap, got
// 'ring'`, `required, got nothing`). Where a problem points (file, line, col,
// path) is decided by the caller through a `Locator`, so the same mapping
// serves a YAML file, a `--set` override and a merged CCL configuration.
import { z } from 'zod';
import type { ConfigProblem } from '../errors.js';
import { isIntegerField, schemaAt, type PathKey } from './schema-path.js';

/** Where a problem at `path` (a path of the validated value) should point. `at: 'key'` for unknown keys. */
export type Locator = (path: readonly PathKey[], at: 'value' | 'key') => Omit<ConfigProblem, 'message'>;

const MAX_RECEIVED = 60;

/** A received value as a reader of the YAML file would write it: `0`, `'ring'`, `.inf`, `[nw, nw]`, `nothing`. */
export function formatReceived(v: unknown): string {
  const text = formatValue(v);
  return text.length > MAX_RECEIVED ? `${text.slice(0, MAX_RECEIVED - 3)}...` : text;
}

function formatValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'string') return `'${v}'`;
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return '.nan';
    if (v === Infinity) return '.inf';
    if (v === -Infinity) return '-.inf';
    return String(v);
  }
  if (Array.isArray(v)) return `[${v.map(formatValue).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}: ${formatValue(x)}`).join(', ')}}`;
  }
  return String(v);
}

const TYPE_NAMES: Record<string, string> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'true or false',
  object: 'a map',
  array: 'a list',
  record: 'a map',
};

/** True when the field at `path` is a union that also accepts `.inf` (a throughput). */
function acceptsInf(schema: z.ZodType, path: readonly PathKey[]): boolean {
  const s = schemaAt(schema, path);
  return s instanceof z.ZodUnion && s.safeParse(Infinity).success;
}

function numberBound(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig, schema: z.ZodType, path: readonly PathKey[]): string {
  const what = isIntegerField(schema, path) ? 'integer' : 'number';
  const orInf = acceptsInf(schema, path) ? ' or .inf' : '';
  const bound = Number(issue.code === 'too_small' ? issue.minimum : issue.maximum);
  if (issue.code === 'too_small' && bound === 0) {
    return `${issue.inclusive ? 'a non-negative' : 'a positive'} ${what}${orInf}`;
  }
  const op = issue.code === 'too_small' ? (issue.inclusive ? '>=' : '>') : issue.inclusive ? '<=' : '<';
  return `${what === 'integer' ? 'an integer' : 'a number'} ${op} ${bound}${orInf}`;
}

function sizeBound(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string {
  const n = Number(issue.code === 'too_small' ? issue.minimum : issue.maximum);
  const unit = issue.origin === 'string' ? 'character' : 'item';
  if (issue.code === 'too_small') return n === 1 && issue.origin === 'string' ? 'a non-empty string' : `at least ${n} ${unit}(s)`;
  return `at most ${n} ${unit}(s)`;
}

/** The "expected ..." half of a message for one issue (the caller appends `, got <received>`). */
function expectation(issue: z.core.$ZodIssue, input: unknown, schema: z.ZodType, path: readonly PathKey[]): string {
  switch (issue.code) {
    case 'invalid_type':
      // zod's number rejects .inf and .nan as a wrong type; say what is wrong with them.
      if (typeof input === 'number' && !Number.isFinite(input)) return `expected a finite ${isIntegerField(schema, path) ? 'integer' : 'number'}`;
      return `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'too_small':
    case 'too_big':
      return `expected ${issue.origin === 'number' || issue.origin === 'int' || issue.origin === 'bigint' ? numberBound(issue, schema, path) : sizeBound(issue)}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `expected ${formatValue(issue.values[0])}`
        : `expected one of ${issue.values.map(String).join('|')}`;
    case 'invalid_union':
      // A union with its own message (throughput's) says it best; zod's generic one says nothing.
      return issue.message !== 'Invalid input' ? stripReceived(issue.message) : 'expected a value of another type';
    case 'not_multiple_of':
      return `expected a multiple of ${String(issue.divisor)}`;
    default:
      return stripReceived(issue.message);
  }
}

/** Schema-authored messages may already end with `, got <x>`; drop it so it is not said twice. */
function stripReceived(message: string): string {
  return message.replace(/, got .*$/s, '');
}

/**
 * One or more ConfigProblems per zod issue (one per unknown key), each pointing
 * where `locate` says and ending with what was received. `schema` is the schema
 * that produced the issues; it tells integer fields and `.inf`-capable fields apart.
 * Issues must come from `safeParse(data, { reportInput: true })` so `input` is set.
 */
export function issueProblems(issues: readonly z.core.$ZodIssue[], schema: z.ZodType, locate: Locator): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((k): k is PathKey => typeof k !== 'symbol');
    if (issue.code === 'unrecognized_keys') {
      const known = Object.keys(((schemaAt(schema, path) as z.ZodObject | undefined)?.shape ?? {}) as object);
      for (const key of issue.keys) {
        const expected = known.length > 0 ? `expected one of ${known.join('|')}, got ` : '';
        problems.push({ ...locate([...path, key], 'key'), message: `${expected}unknown key '${key}'` });
      }
      continue;
    }
    const input = (issue as { input?: unknown }).input;
    if (issue.code === 'custom') {
      // kernbench's own refinements write the whole sentence, received value included.
      problems.push({ ...locate(path, 'value'), message: issue.message });
      continue;
    }
    if ((issue.code === 'invalid_type' || issue.code === 'invalid_value') && input === undefined) {
      problems.push({ ...locate(path, 'value'), message: 'required, got nothing' });
      continue;
    }
    problems.push({ ...locate(path, 'value'), message: `${expectation(issue, input, schema, path)}, got ${formatReceived(input)}` });
  }
  return problems;
}

/** Problems in reading order: by line, then column; problems without a line (`--set`) keep their order, last. */
export function sortProblems(problems: ConfigProblem[]): ConfigProblem[] {
  return problems
    .map((p, i) => ({ p, i }))
    .sort((a, b) => {
      const la = a.p.line ?? Infinity;
      const lb = b.p.line ?? Infinity;
      if (la !== lb) return la - lb;
      const ca = a.p.col ?? 0;
      const cb = b.p.col ?? 0;
      return ca !== cb ? ca - cb : a.i - b.i;
    })
    .map(({ p }) => p);
}

// Runs on: main thread. Owns: `--set dotted.path=value` overrides: parsing one,
// routing them (topology sets vs `ccl.` sets), checking each path against a
// schema, and writing the values into a YAML document or a plain object.
//
// A value is parsed as YAML, so `1`, `.inf`, `true`, `tcm` and `[nw, ne]` mean
// what they mean in a file. Later sets win over earlier ones for the same path.
import { isCollection, isDocument, parse as parseYaml, type Document } from 'yaml';
import { z } from 'zod';
import { KernbenchError, type ConfigProblem } from '../errors.js';
import { formatReceived } from './problems.js';
import { dottedPath, schemaAt, type PathKey } from './schema-path.js';

/** Sets starting with this prefix configure the collective (ccl.yaml), not the topology. */
export const CCL_SET_PREFIX = 'ccl.';

/** The `file` of a problem caused by a `--set` override. */
export const SET_SOURCE = '--set';

/** One parsed `--set`: the text as typed, its path (indices as numbers) and its YAML value. */
export interface ConfigSet {
  text: string;
  path: PathKey[];
  value: unknown;
}

/** Parse `dotted.path=value`. A missing `=`, an empty path or segment, or a value that is not YAML is ERR_INVALID_SET. */
export function parseSet(text: string): ConfigSet {
  const eq = text.indexOf('=');
  if (eq < 0) throw new KernbenchError('ERR_INVALID_SET', `--set expects dotted.path=value, got '${text}'`);
  const pathText = text.slice(0, eq).trim();
  const segments = pathText.split('.');
  if (pathText === '' || segments.some((s) => s === '')) {
    throw new KernbenchError('ERR_INVALID_SET', `--set expects a dotted path before '=' (like system.sips.count=4), got '${text}'`);
  }
  let value: unknown;
  try {
    value = parseYaml(text.slice(eq + 1), { prettyErrors: false });
  } catch (e) {
    throw new KernbenchError('ERR_INVALID_SET', `--set value is not valid YAML (${(e as Error).message}), got '${text}'`);
  }
  return { text, path: segments.map((s) => (/^\d+$/.test(s) ? Number(s) : s)), value };
}

/** Route sets: `ccl.`-prefixed ones (prefix stripped) configure the collective, the rest the topology. */
export function splitSets(sets: readonly string[]): { topology: string[]; ccl: string[] } {
  const topology: string[] = [];
  const ccl: string[] = [];
  for (const s of sets) {
    if (s.startsWith(CCL_SET_PREFIX)) ccl.push(s.slice(CCL_SET_PREFIX.length));
    else topology.push(s);
  }
  return { topology, ccl };
}

/** The last set whose path is `path` or a parent of it: the set a problem at `path` comes from. */
export function setCovering(sets: readonly ConfigSet[], path: readonly PathKey[]): ConfigSet | undefined {
  for (let i = sets.length - 1; i >= 0; i--) {
    const p = sets[i].path;
    if (p.length <= path.length && p.every((k, j) => String(k) === String(path[j]))) return sets[i];
  }
  return undefined;
}

/** Why `path` names no field of `schema`: the first unknown segment and what was expected there. */
function unknownPathMessage(schema: z.ZodType, path: readonly PathKey[]): string {
  let i = 1;
  while (i < path.length && schemaAt(schema, path.slice(0, i)) !== undefined) i++;
  const parent = schemaAt(schema, path.slice(0, i - 1));
  const key = path[i - 1];
  if (parent instanceof z.ZodObject) {
    return `expected one of ${Object.keys(parent.shape).join('|')}, got unknown key '${key}'`;
  }
  return `expected no deeper path here, got ${formatReceived(key)}`;
}

function setInObject(target: Record<string, unknown>, path: readonly PathKey[], value: unknown): void {
  let node: Record<PropertyKey, unknown> = target;
  for (let i = 0; i < path.length - 1; i++) {
    const next = node[path[i]];
    if (typeof next !== 'object' || next === null) {
      // A scalar in the way is replaced: the set says what this subtree is.
      node[path[i]] = typeof path[i + 1] === 'number' ? [] : {};
    }
    node = node[path[i]] as Record<PropertyKey, unknown>;
  }
  node[path[path.length - 1]] = value;
}

function setInDocument(doc: Document, path: readonly PathKey[], value: unknown): void {
  // As in setInObject, a scalar in the way (even the whole document) is replaced by a map.
  if (!isCollection(doc.contents)) doc.contents = doc.createNode({});
  for (let i = 1; i < path.length; i++) {
    const prefix = path.slice(0, i);
    const node = doc.getIn(prefix, true);
    if (node !== undefined && !isCollection(node)) {
      doc.setIn(prefix, doc.createNode(typeof path[i] === 'number' ? [] : {}));
    }
  }
  doc.setIn(path, doc.createNode(value));
}

/**
 * Parse each set and write it into `target` (a YAML document or a plain object),
 * in order. A set whose path is no field of `schema` is not applied; it comes
 * back as a problem with file `--set` and the path as typed (with `shownPrefix`,
 * e.g. `ccl.`, in front). Malformed sets throw ERR_INVALID_SET.
 */
export function applySets(
  target: Document | Record<string, unknown>,
  sets: readonly string[],
  schema: z.ZodType,
  shownPrefix = '',
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const text of sets) {
    const set = parseSet(text);
    if (schemaAt(schema, set.path) === undefined) {
      problems.push({ file: SET_SOURCE, path: shownPrefix + dottedPath(set.path), message: unknownPathMessage(schema, set.path) });
      continue;
    }
    if (isDocument(target)) setInDocument(target, set.path, set.value);
    else setInObject(target, set.path, set.value);
  }
  return problems;
}

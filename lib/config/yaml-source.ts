// Runs on: main thread. Owns: reading one YAML configuration file into a
// `yaml.Document` that keeps node ranges, turning YAML syntax errors into
// ConfigProblems, and finding the `line:col` of a dotted path in the document.
// A file that is not small UTF-8 text (a device, a binary) or whose aliases
// expand without bound (an alias bomb) is refused as one problem, unparsed.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document } from 'yaml';
import type { ConfigProblem } from '../errors.js';
import type { PathKey } from './schema-path.js';

/** A parsed YAML file: the document (with ranges) and how to turn offsets into line:col. */
export interface YamlSource {
  /** The file name as given by the caller (a relative path stays relative in messages). */
  file: string;
  doc: Document;
  lineCounter: LineCounter;
}

/** 1-based line and column. */
export interface Position {
  line: number;
  col: number;
}

/**
 * Read and parse `file`. Syntax errors do not throw: they come back as problems
 * (with the source text at the error as the received value) next to a document
 * that holds whatever did parse, so schema problems can be reported with them.
 * An unreadable file is a single problem and no source.
 */
export function readYamlSource(file: string): { source: YamlSource | undefined; problems: ConfigProblem[] } {
  const only = (message: string) => ({ source: undefined, problems: [{ file, path: '', message }] });
  let bytes: Buffer;
  try {
    bytes = readCapped(file, MAX_YAML_BYTES);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    return only(`cannot read the file (${code}), got '${file}'`);
  }
  if (bytes.length > MAX_YAML_BYTES) return only(`a configuration file is at most ${MAX_YAML_BYTES} bytes (1 MiB), got more than that from '${file}'`);
  const nul = bytes.indexOf(0);
  if (nul >= 0) return only(`not a text file: a NUL byte at offset ${nul}, got a binary file '${file}'`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return only(`not UTF-8 text, got a file whose bytes do not decode as UTF-8: '${file}'`);
  }
  const parsed = parseYamlSource(file, text);
  const unresolved = unresolvedAliases(parsed.source);
  if (unresolved.length > 0) return { source: undefined, problems: [...parsed.problems, ...unresolved] };
  try {
    parsed.source.doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    // yaml's resource-exhaustion guard (an alias bomb: aliases of aliases expanding without bound).
    return only(`YAML aliases expand too far (more than ${MAX_ALIAS_COUNT} per alias): ${(e as Error).message}, got '${file}'`);
  }
  return parsed;
}

/** The largest configuration file read: far above any real topology, far below what would stall a run (/dev/zero). */
export const MAX_YAML_BYTES = 1024 * 1024;
/** yaml's maxAliasCount: how many nodes one alias may expand to (yaml's own default). */
const MAX_ALIAS_COUNT = 100;

/** Up to `cap + 1` bytes of `file` (so a longer file is seen as longer than `cap` without reading all of it). */
function readCapped(file: string, cap: number): Buffer {
  const fd = openSync(file, 'r');
  try {
    if (fstatSync(fd).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    const buf = Buffer.alloc(cap + 1);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** Parse YAML text already in memory; `file` is only used to name it in problems. */
export function parseYamlSource(file: string, text: string): { source: YamlSource; problems: ConfigProblem[] } {
  const lineCounter = new LineCounter();
  // prettyErrors off: we print our own `file:line:col`, and the pretty form adds a source excerpt.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, keepSourceTokens: false });
  const problems = doc.errors.map((err): ConfigProblem => {
    const { line, col } = lineCounter.linePos(err.pos[0]);
    // The rest of the line from the error on: enough to recognise it, never a whole block.
    const snippet = printable(text.slice(err.pos[0]).split('\n')[0].trim().slice(0, 40));
    const got = snippet === '' ? 'end of line' : `'${snippet}'`;
    return { file, line, col, path: '', message: `YAML syntax: ${err.message}, got ${got}` };
  });
  return { source: { file, doc, lineCounter }, problems };
}

/**
 * Each alias whose anchor is not set before it (`name: *nope`), as a problem at
 * the alias. Checked before expanding, so such a file is not mistaken for an
 * alias bomb (yaml's toJS throws for both).
 */
function unresolvedAliases(source: YamlSource): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const anchors = new Set<string>(); // set so far, in document order (yaml's own rule)
  visit(source.doc, {
    Node(_key, node) {
      if (isAlias(node)) {
        if (anchors.has(node.source)) return;
        const { line, col } = source.lineCounter.linePos(rangeStart(node) ?? 0);
        problems.push({ file: source.file, line, col, path: '', message: `YAML alias names no anchor set before it, got '*${printable(node.source.slice(0, 40))}'` });
      } else if (node.anchor !== undefined) {
        anchors.add(node.anchor);
      }
    },
  });
  return problems;
}

/** Control characters written as \\xNN, so a message never sends raw bytes to a terminal. */
function printable(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range?.[0];
}

function keyName(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  if (typeof key === 'string' || typeof key === 'number') return String(key);
  return undefined;
}

/**
 * Where the value at `path` is written. A scalar points at its value, a map or
 * sequence at the key that opens it, so `system.sips: needs w x h` lands on the
 * `sips:` line. With `at: 'key'` a map entry always points at its key (used for
 * unknown keys). When the path does not exist (a missing key), the position is
 * that of the deepest part of the path that does exist; the document start when
 * nothing does.
 */
export function locate(source: YamlSource, path: readonly PathKey[], at: 'value' | 'key' = 'value'): Position | undefined {
  const { doc, lineCounter } = source;
  let node: unknown = doc.contents;
  let best = rangeStart(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const key = path[i];
    const last = i === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && keyName(p.key) === String(key));
      if (pair === undefined) break;
      const keyAt = rangeStart(pair.key);
      const valueAt = rangeStart(pair.value);
      const scalarValue = isScalar(pair.value) && pair.value.source !== '';
      if (keyAt !== undefined) best = keyAt;
      if (last && at === 'value' && scalarValue && valueAt !== undefined) best = valueAt;
      node = pair.value;
    } else if (isSeq(node) && typeof key === 'number') {
      const item = node.items[key];
      if (item === undefined) break;
      best = rangeStart(item) ?? best;
      node = item;
    } else {
      break;
    }
  }
  return lineCounter.linePos(best);
}

// Runs on: main thread (tap). Covers: the docs that restate code say what the code
// says today (STYLE 16): every decision record carries a Status line whose record
// numbers exist; docs/threads.md's message table lists exactly the messages and
// fields of the union in lib/sync/messages.ts (read with the TypeScript parser); the
// paths and links in the README and docs/ exist. No threads.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import ts from 'typescript';

// The tests run compiled, from dist/test/: the project root is two levels up.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const read = (rel: string): string => readFileSync(join(ROOT, rel), 'utf8');
const DECISIONS = 'docs/decisions';
const records = readdirSync(join(ROOT, DECISIONS)).filter((f) => /^\d{4}-.*\.md$/.test(f)).sort();
const numbers = new Set(records.map((f) => f.slice(0, 4)));

// --- Decision records ------------------------------------------------------

/** A record's Status line: among its first lines, `Status: accepted ...` (or superseded, rejected, proposed). */
export function statusOf(text: string): string | undefined {
  return text
    .split('\n')
    .slice(0, 6)
    .find((l) => l.startsWith('Status: '));
}

/** What is wrong with one record's Status line, as sentences (empty: nothing). */
export function statusProblems(name: string, text: string, known: Set<string>): string[] {
  const status = statusOf(text);
  if (status === undefined) return [`${name}: no "Status: " line among its first lines`];
  const problems: string[] = [];
  if (!/^Status: (accepted|superseded by \d{4}|rejected|proposed)\b/.test(status)) problems.push(`${name}: the status is not accepted, superseded by NNNN, rejected or proposed: ${status}`);
  // A record number is four digits on their own (2026-11-24 is a date).
  for (const m of status.matchAll(/(?<![\d-])(\d{4})(?![\d-])/g)) if (!known.has(m[1])) problems.push(`${name}: the Status names record ${m[1]}, which does not exist`);
  return problems;
}

t.test('every decision record has a Status line, and every record it names exists', async (t) => {
  t.ok(records.length >= 35, `found the records (${records.length})`);
  t.same(
    records.flatMap((f) => statusProblems(f, read(`${DECISIONS}/${f}`), numbers)),
    [],
  );
});

t.test('the Status check refuses a missing line, an unknown status and a record that does not exist', async (t) => {
  const known = new Set(['0001', '0002']);
  t.equal(statusProblems('a', '# 0003. A\n\n## Context\n', known).length, 1, 'no Status line');
  t.equal(statusProblems('b', '# 0003. B\n\nStatus: maybe\n', known).length, 1, 'not a status');
  t.equal(statusProblems('c', '# 0003. C\n\nStatus: superseded by 0009\n', known).length, 1, 'superseded by a record that does not exist');
  t.same(statusProblems('d', '# 0003. D\n\nStatus: superseded by 0002 on 2026-11-24 (and see 0001)\n', known), [], 'a good one, with a date');
});

t.test("each record's title carries its file's number, and no number is taken twice", async (t) => {
  t.same(
    records.filter((f) => !read(`${DECISIONS}/${f}`).startsWith(`# ${f.slice(0, 4)}. `)),
    [],
  );
  t.equal(numbers.size, records.length);
});

t.test('the README links every decision record, and only records that exist', async (t) => {
  const linked = [...read('README.md').matchAll(/\]\(docs\/decisions\/(\d{4}-[^)]+\.md)\)/g)].map((m) => m[1]);
  t.same([...new Set(linked)].sort(), records);
});

// --- docs/threads.md's message table ---------------------------------------

/**
 * The messages of lib/sync/messages.ts: for each exported type, its entries as the
 * table writes them — a union member `name {field, ...}` under its `type` literal
 * (`name` alone when it has no other field), an interface `Name {field, ...}`.
 */
export function messageTypes(source: string): Map<string, string[]> {
  const file = ts.createSourceFile('messages.ts', source, ts.ScriptTarget.ES2022, true);
  const entry = (name: string, members: ts.NodeArray<ts.TypeElement>, skip: string): string => {
    const fields = members.filter(ts.isPropertySignature).map((p) => p.name.getText(file)).filter((f) => f !== skip);
    return fields.length === 0 ? name : `${name} {${fields.join(', ')}}`;
  };
  const out = new Map<string, string[]>();
  for (const st of file.statements) {
    const exported = ts.canHaveModifiers(st) && (ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) continue;
    if (ts.isInterfaceDeclaration(st)) out.set(st.name.text, [entry(st.name.text, st.members, '')]);
    if (ts.isTypeAliasDeclaration(st)) {
      const members: readonly ts.TypeNode[] = ts.isUnionTypeNode(st.type) ? st.type.types : [st.type];
      const entries = members.filter(ts.isTypeLiteralNode).map((lit) => {
        const tag = lit.members.filter(ts.isPropertySignature).find((p) => p.name.getText(file) === 'type');
        const literal = tag?.type !== undefined && ts.isLiteralTypeNode(tag.type) && ts.isStringLiteral(tag.type.literal) ? tag.type.literal.text : '?';
        return entry(literal, lit.members, 'type');
      });
      out.set(st.name.text, entries);
    }
  }
  return out;
}

/** The message table's rows: the types each names (in its first cell) and the entries it lists (in its last). */
function tableRows(doc: string): { types: string[]; entries: string[] }[] {
  const section = doc.slice(doc.indexOf('## What crosses threads by message'), doc.indexOf('## What crosses threads by Atomics'));
  return section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| direction'))
    .map((l) => {
      const cells = l.split(' | ');
      const types = [...cells[0].matchAll(/`(\w+)`/g)].map((m) => m[1]);
      // The messages are the cell's backticked names; a remark in parentheses is not one.
      const listed = cells[cells.length - 1].replace(/\((?:[^()]|\([^()]*\))*\)/g, '');
      const entries = [...listed.matchAll(/`([\w-]+(?: \{[^}]*\})?)`/g)].map((m) => m[1]);
      return { types, entries };
    });
}

t.test("docs/threads.md's message table lists every message type of lib/sync/messages.ts with every field", async (t) => {
  const doc = read('docs/threads.md');
  const path = /The closed table is `(lib\/[^`]+\.ts)`/.exec(doc)?.[1];
  t.ok(path, 'the table names its source file');
  const types = messageTypes(read(path ?? ''));
  t.ok(types.size >= 6, `read the source's types (${[...types.keys()].join(', ')})`);
  const rows = tableRows(doc);
  t.same(rows.flatMap((r) => r.types).sort(), [...types.keys()].sort(), 'each exported type has a row');
  for (const row of rows) {
    const expected = row.types.flatMap((name) => types.get(name) ?? []);
    t.same(row.entries, expected, `the row of ${row.types.join(', ')}`);
  }
});

t.test('the message reader sees a field added to a message', async (t) => {
  const src = "export type ToX = { type: 'go'; a: number } | { type: 'stop' };\nexport interface Init { x: number; y: string }\n";
  t.same(Object.fromEntries(messageTypes(src)), { ToX: ['go {a}', 'stop'], Init: ['Init {x, y}'] });
  t.same(messageTypes(src.replace('a: number', 'a: number; b: number')).get('ToX'), ['go {a, b}', 'stop']);
});

// --- Paths and links -------------------------------------------------------

/** The README, lib/README.md and docs/ (decision records are history: they may name what is gone). */
function liveDocs(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md') && !f.startsWith('decisions'))
    .map((f) => `docs/${f}`);
  return ['README.md', 'lib/README.md', ...docs].sort();
}

/**
 * Paths of the repository a document mentions that do not exist: a path under one of
 * the top folders (`lib/ipcq/ring.ts`, `lib/runtime/`, a `.ts` file named without its
 * extension), and a relative Markdown link. A word in capitals (`benches/NAME.ts`) is a
 * placeholder.
 */
export function missingPaths(rel: string, text: string, exists: (p: string) => boolean): string[] {
  const out: string[] = [];
  const at = (i: number): string => `${rel}:${text.slice(0, i).split('\n').length}`;
  for (const m of text.matchAll(/(?<![\w./-])((?:lib|bin|benches|test|docs|topologies|scripts|examples|schemas)\/[\w./-]*[\w/])/g)) {
    if (text.slice(m.index - 2, m.index) === '](') continue; // a link: checked below, from its document's folder
    const p = m[1].replace(/\.$/, '');
    if (/\/[A-Z]+[./]|\/[A-Z]+$/.test(p)) continue;
    if (!exists(p) && !exists(`${p}.ts`)) out.push(`${at(m.index)}: ${p}`);
  }
  for (const m of text.matchAll(/\]\(([^)#:]+)(?:#[^)]*)?\)/g)) {
    const target = join(dirname(rel), m[1]);
    if (!exists(target)) out.push(`${at(m.index)}: link ${m[1]}`);
  }
  return out;
}

t.test('every repository path and relative link in the README and docs/ exists', async (t) => {
  const exists = (p: string): boolean => existsSync(resolve(ROOT, p));
  t.same(
    liveDocs().flatMap((f) => missingPaths(f, read(f), exists)),
    [],
  );
});

t.test('the path check flags a folder that went away and a broken link, not a placeholder', async (t) => {
  const exists = (p: string): boolean => ['lib/sync', 'lib/sync/plan.ts', 'docs/a.md'].includes(p);
  t.same(missingPaths('README.md', 'in `lib/runtime/` and lib/sync/plan, see [a](docs/a.md), [b](docs/b.md), benches/NAME.ts', exists), [
    'README.md:1: lib/runtime/',
    'README.md:1: link docs/b.md',
  ]);
});

t.test("the README's Documentation list links every document of docs/", async (t) => {
  const readme = read('README.md');
  const section = readme.slice(readme.indexOf('## Documentation'));
  const linked = new Set([...section.matchAll(/\]\(docs\/([\w.-]+\.md)\)/g)].map((m) => m[1]));
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
  t.same(docs.filter((f) => !linked.has(f)), []);
});

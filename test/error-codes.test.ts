// Runs on: main thread (tap). Covers: the error registry's contract (decision
// 0043) — every throw in lib/ is a registered KernbenchError except a short
// allow-list of unreachable invariants, every registered code is raised
// somewhere, no code is raised from more than MAX_SITES places, and the docs
// name only registered codes, with docs/errors.md's table generated from the
// registry. Reads the TypeScript sources, not dist/.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { AbortError, DeadlockError, ERROR_CODES, KernelError, serializeError, SpawnError, type ErrorCode } from '../lib/errors.js';
import { END, ERRORS_DOC, errorCodeTable, ROOT, tableInDoc } from './helpers/error-docs.js';

/**
 * Raw throws allowed in lib/: only where nothing reaches a user. Each entry is
 * a file and a fragment of its throw, so a new raw throw in the same file is
 * still caught.
 */
const RAW_THROW_ALLOWED: readonly { file: string; fragment: string; why: string }[] = [
  { file: 'lib/ccl/placement.ts', fragment: 'unknown arrangement ${String(never)}', why: 'exhaustive switch: the compiler proves it unreachable' },
  { file: 'lib/ccl/placement.ts', fragment: 'unknown arrangement ${JSON.stringify(never)}', why: 'exhaustive switch: the compiler proves it unreachable' },
  { file: 'lib/host/dp-policy.ts', fragment: 'unknown split mode ${String(never)}', why: 'exhaustive switch: the constructor checked the mode' },
  { file: 'lib/sync/messages.ts', fragment: 'unhandled message ${JSON.stringify(x)}', why: "exhaustive switch over the thread messages' union" },
  { file: 'lib/ipcq/link-timing.ts', fragment: "unknown link mode '${String(never)}'", why: 'exhaustive switch: the plan derives the mode from typed settings' },
  { file: 'lib/coordinator/coordinator-worker.ts', fragment: 'coordinator-worker must run in a worker thread', why: "the worker script's entry guard; only the session starts it" },
];

/**
 * The most places one code may be raised from. Six lets one condition be
 * checked at each public door that meets it (host API, tensor-parallel layers,
 * collectives, kernels) plus a variant or two, which is where the largest
 * codes stand (ERR_TENSOR_PLACEMENT, ERR_OUT_OF_RANGE, ERR_INVALID_ARG_VALUE
 * and ERR_SHAPE_MISMATCH: 6 each); a seventh site is a new condition that deserves its own
 * code, or one check written twice that should be one helper.
 */
const MAX_SITES = 6;

/**
 * Codes exempt from MAX_SITES, each for a stated reason. ERR_INTERNAL is every
 * broken invariant of kernbench itself: one code, by design. ERR_ABORTED is one
 * condition (an actor woken by an abort) raised wherever a wait can be woken; the
 * abort's reason is in its message.
 */
const UNCAPPED: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['ERR_INTERNAL', 'ERR_ABORTED']);

/** Codes of other libraries that kernbench reads off their errors (never raises), as the docs may name them. */
const FOREIGN_CODES = new Set(['ERR_MODULE_NOT_FOUND', 'ERR_WORKER_INVALID_EXEC_ARGV', 'ERR_PARSE_ARGS_UNKNOWN_OPTION', 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL']);

function sources(dir: string, ext: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return sources(p, ext);
    return p.endsWith(ext) ? [p] : [];
  });
}

const rel = (file: string): string => relative(ROOT, file);
const CODE_FILES = ['lib', 'bin', 'benches'].flatMap((d) => sources(join(ROOT, d), '.ts')).filter((f) => !f.endsWith('.d.ts'));

/** The registry's own text: its tables of codes (lib/error-codes.ts) and its classes' `super(code)` (lib/errors.ts) are definitions, not raises. */
function withoutDefinitions(file: string, text: string): string {
  if (rel(file) === 'lib/error-codes.ts') return '';
  if (rel(file) !== 'lib/errors.ts') return text;
  for (const table of ['export const USAGE_ERROR_CODES', 'export const ERROR_CODES']) {
    const a = text.indexOf(table);
    if (a < 0) continue;
    const b = text.indexOf('} as const;', a);
    text = text.slice(0, a) + text.slice(b);
  }
  return text.replace(/super\(\s*'ERR_[A-Z0-9_]+'/g, 'super(');
}

/**
 * Each registry class with a code of its own raises it: `new DeadlockError(...)`
 * is a raise of ERR_DEADLOCK. (A ConfigError is given its code at each `new`.)
 */
const CLASS_CODES: ReadonlyMap<string, string> = new Map(
  [
    new DeadlockError([]),
    new AbortError(''),
    new KernelError('k', { sip: 0, cube: 0, pe: 0 }, 0, serializeError(new Error('x'))),
    new SpawnError(new Map()),
  ].map((e) => [e.name, e.code]),
);

interface Site {
  file: string;
  line: number;
  code: string;
  text: string;
}

/** Where each code is raised: a code literal that is not read, and each `new` of a registry class. */
function raiseSites(): Site[] {
  const out: Site[] = [];
  for (const file of CODE_FILES) {
    const lines = withoutDefinitions(file, readFileSync(file, 'utf8')).split('\n');
    lines.forEach((text, i) => {
      // Not a raise: a comparison (`=== 'ERR_X'`) or a member of a type union (`'ERR_X' | ...`).
      for (const m of text.matchAll(/(===|!==|\|)?\s*'(ERR_[A-Z0-9_]+)'(\s*\|)?/g)) if (!m[1] && !m[3]) out.push({ file: rel(file), line: i + 1, code: m[2], text: text.trim() });
      for (const m of text.matchAll(/new (\w+Error)\(/g)) {
        const code = CLASS_CODES.get(m[1]);
        if (code) out.push({ file: rel(file), line: i + 1, code, text: text.trim() });
      }
    });
  }
  return out;
}

const SITES = raiseSites();

t.test('CLASS_CODES knows every registry class the sources construct', async (t) => {
  t.same([...CLASS_CODES.values()].sort(), ['ERR_ABORTED', 'ERR_DEADLOCK', 'ERR_KERNEL', 'ERR_SPAWN']);
});

t.test('lib/ throws no raw Error, TypeError or RangeError outside the allow-list of unreachable invariants', async (t) => {
  const raw: string[] = [];
  const allowedSeen = new Set<number>();
  for (const file of sources(join(ROOT, 'lib'), '.ts')) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        if (!/throw new (Error|TypeError|RangeError|SyntaxError|ReferenceError)\b/.test(text)) return;
        const k = RAW_THROW_ALLOWED.findIndex((a) => a.file === rel(file) && text.includes(a.fragment));
        if (k >= 0) allowedSeen.add(k);
        else raw.push(`${rel(file)}:${i + 1}: ${text.trim()}`);
      });
  }
  t.same(raw, [], 'raw throws: give each a registered code (lib/errors.ts)');
  t.same(
    RAW_THROW_ALLOWED.filter((_, k) => !allowedSeen.has(k)).map((a) => `${a.file}: ${a.fragment}`),
    [],
    'allow-list entries that no longer match a throw: remove them',
  );
});

t.test('every code raised in the sources is registered, and every registered code is raised somewhere', async (t) => {
  const registered = new Set(Object.keys(ERROR_CODES));
  const raised = new Set(SITES.map((s) => s.code));
  t.same(
    SITES.filter((s) => !registered.has(s.code) && !FOREIGN_CODES.has(s.code)).map((s) => `${s.file}:${s.line}: ${s.code}`),
    [],
    'raised but not registered',
  );
  t.same(
    [...registered].filter((c) => !raised.has(c)),
    [],
    'registered but never raised (dead codes)',
  );
});

t.test(`no code is raised from more than ${MAX_SITES} places`, async (t) => {
  const byCode = new Map<string, Site[]>();
  for (const s of SITES) if (!UNCAPPED.has(s.code as ErrorCode)) byCode.set(s.code, [...(byCode.get(s.code) ?? []), s]);
  const over = [...byCode].filter(([, s]) => s.length > MAX_SITES).map(([code, s]) => `${code}: ${s.length} sites (${s.map((x) => `${x.file}:${x.line}`).join(', ')})`);
  t.same(over, []);
});

t.test("docs/errors.md's table is the registry's, row for row", async (t) => {
  const text = readFileSync(ERRORS_DOC, 'utf8');
  t.ok(text.includes(END), 'the end marker is there');
  t.equal(tableInDoc(text), errorCodeTable(), 'regenerate: npm run build && node dist/test/helpers/error-docs.js --write');
});

t.test('the README and docs name only registered codes (or the foreign codes kernbench reads)', async (t) => {
  // Decision records are history: each tells what was decided then, and is never edited.
  const docs = [join(ROOT, 'README.md'), join(ROOT, 'lib', 'README.md'), ...sources(join(ROOT, 'docs'), '.md').filter((f) => !rel(f).startsWith('docs/decisions/'))];
  const bad: string[] = [];
  for (const file of docs) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        for (const m of text.matchAll(/\bERR_[A-Z0-9_]*[A-Z0-9]\b/g)) {
          if (!(m[0] in ERROR_CODES) && !FOREIGN_CODES.has(m[0])) bad.push(`${rel(file)}:${i + 1}: ${m[0]}`);
        }
      });
  }
  t.same(bad, []);
});

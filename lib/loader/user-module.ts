// Runs on: any thread (main loads benches and algorithms; executors load the
// modules that hold kernels and spawned functions). Owns: importing a module
// that may be a user's file — TypeScript (.ts, .mts) or JavaScript (.js, .mjs)
// outside the package, with no build step — and refusing one that cannot load
// or does not export what its kind requires, with its path and no stack.
//
// TypeScript goes through tsx (decision 0011). Its hooks are per thread: a
// worker does not inherit the main thread's, so every thread registers them
// itself, the first time it imports a TypeScript file, and only then (plain
// .js imports get slower under the hooks).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { KernbenchError } from '../errors.js';

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts']);
const LOADABLE = new Set(['.ts', '.mts', '.js', '.mjs']);

let tsxReady: Promise<void> | undefined;

/** Register tsx's ESM hooks in this thread (once). */
function typeScriptLoader(): Promise<void> {
  tsxReady ??= import('tsx/esm/api').then((api) => {
    api.register();
  });
  return tsxReady;
}

/** Does `url` name a TypeScript file (so this thread needs the loader)? */
export function isTypeScript(url: string): boolean {
  return TYPESCRIPT.has(extname(url.startsWith('file:') ? fileURLToPath(url) : url));
}

/** Import the module at file URL `url`; TypeScript files through tsx. Failures name the file: ERR_MODULE_MISSING, ERR_MODULE_FORMAT, ERR_MODULE_SYNTAX or ERR_MODULE_THREW. */
export async function importModule(url: string): Promise<Record<string, unknown>> {
  if (isTypeScript(url)) {
    checkEsmTypeScript(url);
    await typeScriptLoader();
  }
  loading.set(url, (loading.get(url) ?? 0) + 1);
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (e) {
    throw loadError(url, e);
  } finally {
    const n = (loading.get(url) ?? 1) - 1;
    if (n === 0) loading.delete(url);
    else loading.set(url, n);
  }
}

/** Imports under way on this thread, by URL (how many of each). */
const loading = new Map<string, number>();

/**
 * The files this thread is still importing: what a process waits for when a
 * module's top-level await never settles (the CLI names them as it ends).
 */
export function modulesLoading(): string[] {
  return [...loading.keys()].sort().map((url) => (url.startsWith('file:') ? fileURLToPath(url) : url));
}

/** Why `url` failed to load, as one line with the file and, for a syntax error, its line and column. */
function loadError(url: string, e: unknown): KernbenchError {
  const file = url.startsWith('file:') ? fileURLToPath(url) : url;
  const err = e as { name?: string; code?: string; message?: string };
  if (err?.code === 'ERR_MODULE_NOT_FOUND') return new KernbenchError('ERR_MODULE_MISSING', `${file} could not be loaded: ${oneLine(err.message)}`);
  // tsx/esbuild: "Transform failed with 1 error:\n/abs/x.ts:2:28: ERROR: Expected ...".
  const at = /^(.*?):(\d+):(\d+): ERROR: (.*)$/m.exec(err?.message ?? '');
  if (at) return new KernbenchError('ERR_MODULE_SYNTAX', `${at[1]}:${at[2]}:${at[3]}: ${at[4]}`);
  if (err?.name === 'SyntaxError') {
    const pos = javaScriptSyntaxPosition(file);
    return new KernbenchError('ERR_MODULE_SYNTAX', pos === undefined ? `${file}: ${err.message}${syntaxPosition(e)}` : `${file}:${pos.line}:${pos.col}: ${err.message}`);
  }
  if (e instanceof KernbenchError) return e;
  return new KernbenchError('ERR_MODULE_THREW', `${file} threw while loading: ${err?.name ?? 'Error'}: ${oneLine(err?.message ?? String(e))}`);
}

/** V8 puts a SyntaxError's position in the first stack line ("file:///x.js:3"). */
function syntaxPosition(e: unknown): string {
  const m = /^(file:\/\/\S+?):(\d+)$/m.exec((e as Error).stack ?? '');
  return m ? ` (line ${m[2]})` : '';
}

/**
 * Where a JavaScript file's first syntax error is, 1-based: V8 gives an ES
 * module's SyntaxError no position, so the file is parsed again by esbuild
 * (tsx's own parser, so always installed with it). Undefined when it finds none
 * (an error only V8 reports) or the file cannot be read.
 */
function javaScriptSyntaxPosition(file: string): { line: number; col: number } | undefined {
  if (!file.startsWith('/') && !isAbsolute(file)) return undefined;
  try {
    const esbuild = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'))('esbuild') as { transformSync: (code: string, options: Record<string, unknown>) => unknown };
    esbuild.transformSync(readFileSync(file, 'utf8'), { loader: 'js', format: 'esm', sourcefile: file, logLevel: 'silent' });
  } catch (e) {
    const loc = (e as { errors?: { location?: { line: number; column: number } | null }[] }).errors?.[0]?.location;
    if (loc) return { line: loc.line, col: loc.column + 1 };
  }
  return undefined;
}

function oneLine(s: string | undefined): string {
  return (s ?? '').split('\n')[0];
}

/**
 * tsx compiles a `.ts` file as CommonJS unless its package says `"type": "module"`,
 * and kernbench's entry points are ES modules only. Say so before tsx fails obscurely.
 */
function checkEsmTypeScript(url: string): void {
  const file = fileURLToPath(url);
  if (extname(file) !== '.ts') return; // .mts is always ESM
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      let type: unknown;
      try {
        type = (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type;
      } catch {
        type = undefined; // an unreadable package.json is no "type": "module" either
      }
      if (type === 'module') return;
      throw new KernbenchError('ERR_MODULE_FORMAT', `${file} is TypeScript in a CommonJS package: kernbench modules are ES modules; add "type": "module" to ${pkg} or name the file .mts, got type ${JSON.stringify(type ?? 'commonjs')}`);
    }
    if (dirname(dir) === dir) {
      throw new KernbenchError('ERR_MODULE_FORMAT', `${file} is TypeScript outside any package: kernbench modules are ES modules; put a package.json with "type": "module" beside it or name the file .mts, got no package.json`);
    }
  }
}

/**
 * The file URL of a user module named by `path` (absolute, or relative to `baseDir`).
 * `what` says which option named it, for the error (ERR_MODULE_MISSING when there is no such file,
 * ERR_MODULE_FORMAT when it is not a kind of file kernbench loads).
 */
export function userModuleUrl(path: string, baseDir: string, what: string): string {
  const file = isAbsolute(path) ? path : resolve(baseDir, path);
  if (!existsSync(file) || !statSync(file).isFile()) throw new KernbenchError('ERR_MODULE_MISSING', `${what}: no such file ${file}, got '${path}'`);
  const ext = extname(file);
  if (!LOADABLE.has(ext)) throw new KernbenchError('ERR_MODULE_FORMAT', `${what}: a module is a .ts, .mts, .js or .mjs file, got '${path}'`);
  return pathToFileURL(file).href;
}

/** The TypeScript source a missing `.js`/`.mjs` file stands for, as TypeScript's NodeNext imports name it. */
const SOURCE_OF: Record<string, string> = { '.js': '.ts', '.mjs': '.mts' };

/**
 * The module a file URL names, read as a TypeScript user's imports are: a `.js`
 * (`.mjs`) URL whose file does not exist, with a `.ts` (`.mts`) file beside it,
 * names that file. So `new URL('./workers.js', import.meta.url)` works in
 * main.ts as `import './workers.js'` does. Any other URL is returned as it is.
 */
export function sourceUrl(url: string): string {
  if (!url.startsWith('file:')) return url;
  const file = fileURLToPath(url);
  const source = SOURCE_OF[extname(file)];
  if (source === undefined || existsSync(file)) return url;
  const ts = file.slice(0, -extname(file).length) + source;
  return existsSync(ts) ? pathToFileURL(ts).href : url;
}

/** Does `name` look like a path (as opposed to the name of a shipped module)? */
export function isPathLike(name: string): boolean {
  return name.includes('/') || name.includes('\\') || LOADABLE.has(extname(name));
}

/** One export a kind of module must have. */
export interface ExportRule {
  name: string;
  /** What it must be, for the error ("a kernel made with defineKernel"). */
  is: string;
  check(value: unknown): boolean;
  optional?: boolean;
}

/** Refuse a module that breaks its kind's contract: ERR_MODULE_EXPORT with its path, the exports expected and those found. */
export function checkExports(url: string, kind: string, mod: Record<string, unknown>, rules: readonly ExportRule[]): void {
  const wrong = rules.filter((r) => (r.optional && mod[r.name] === undefined ? false : !r.check(mod[r.name])));
  if (wrong.length === 0) return;
  const file = url.startsWith('file:') ? fileURLToPath(url) : url;
  const expected = rules.map((r) => `${r.name}${r.optional ? '?' : ''} (${r.is})`).join(', ');
  const found = Object.keys(mod).sort();
  const bad = wrong.map((r) => `${r.name}: ${mod[r.name] === undefined ? 'missing' : `not ${r.is}, got ${describe(mod[r.name])}`}`).join('; ');
  throw new KernbenchError('ERR_MODULE_EXPORT', `${file} is not a ${kind} module: ${bad}. Expected exports: ${expected}; found: ${found.length ? found.join(', ') : 'none'}`);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'object') return Array.isArray(v) ? 'an array' : 'an object';
  return `${typeof v} ${JSON.stringify(v)}`;
}

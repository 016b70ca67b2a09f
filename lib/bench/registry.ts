// Runs on: main. Owns: finding and loading benches — a shipped bench by name
// (compiled benches/NAME.js) or a user's bench by path (a .ts/.mts/.js/.mjs file
// anywhere, no build step) — through the one door of lib/loader/user-module.ts,
// and refusing a module whose default export is not a defineBench bench.
import { readdirSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../config/paths.js';
import { KernbenchError } from '../errors.js';
import { checkExports, importModule, isPathLike, userModuleUrl, type ExportRule } from '../loader/user-module.js';
import { isBench, type Bench } from './define.js';

export const BENCH_DIR = join(PROJECT_ROOT, 'dist', 'benches');

/** What a bench module must export (its spawned workers are further named exports). */
export const BENCH_EXPORTS: readonly ExportRule[] = [{ name: 'default', is: 'a bench made with defineBench (kernbench/bench)', check: isBench }];

export interface LoadedBench {
  /** The shipped bench's name, or a user bench file's base name without extension. */
  name: string;
  /** The module's file URL: spawn finds the bench's workers among its exports. */
  url: string;
  bench: Bench;
}

export function listBenches(): string[] {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.js'))
    .map((f) => f.slice(0, -3))
    .sort();
}

export function benchUrl(name: string): string {
  return pathToFileURL(join(BENCH_DIR, `${name}.js`)).href;
}

/**
 * Load the bench `nameOrPath`: a shipped bench's name, or a path (absolute or
 * relative to `cwd`). ERR_UNKNOWN_BENCH for an unknown name, an ERR_MODULE_* code
 * for a file that cannot be loaded or is not a bench (lib/loader/user-module.ts).
 */
export async function loadBench(nameOrPath: string, cwd: string = process.cwd()): Promise<LoadedBench> {
  let url: string;
  let name: string;
  if (isPathLike(nameOrPath)) {
    url = userModuleUrl(nameOrPath, cwd, '--bench');
    name = basename(nameOrPath, extname(nameOrPath));
  } else {
    const known = listBenches();
    if (!known.includes(nameOrPath)) throw new KernbenchError('ERR_UNKNOWN_BENCH', `unknown bench (or give a path to a bench module); known: ${known.join(', ')}, got '${nameOrPath}'`);
    url = benchUrl(nameOrPath);
    name = nameOrPath;
  }
  const mod = await importModule(url);
  checkExports(url, 'bench', mod, BENCH_EXPORTS);
  return { name, url, bench: mod.default as Bench };
}

// Runs on: main. Owns: finding and loading bench modules (compiled benches/*.js).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../config/paths.js';
import { UsageError } from '../errors.js';
import type { BenchModule } from './contract.js';

export const BENCH_DIR = join(PROJECT_ROOT, 'dist', 'benches');

export function listBenches(): string[] {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.js'))
    .map((f) => f.slice(0, -3))
    .sort();
}

export function benchUrl(name: string): string {
  return pathToFileURL(join(BENCH_DIR, `${name}.js`)).href;
}

export async function loadBench(name: string): Promise<BenchModule> {
  const known = listBenches();
  if (!known.includes(name)) throw new UsageError(`unknown bench; known: ${known.join(', ')}, got '${name}'`);
  const mod = (await import(benchUrl(name))) as Partial<BenchModule>;
  if (typeof mod.description !== 'string' || (typeof mod.run !== 'function' && typeof mod.evaluate !== 'function')) {
    throw new UsageError(`bench '${name}' must export description and run(torch, ctx) or evaluate(ctx)`);
  }
  return mod as BenchModule;
}

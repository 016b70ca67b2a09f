// Runs on: main. Owns: `kernbench sweep` — one bench run at every point of a
// grid of --set values (the cartesian product of `--over path=v1,v2,...`), on
// one set of threads reused across the points, gathered into one table.
import { UsageError } from '../errors.js';
import type { BenchResult, RunConfig } from './contract.js';
import { runBench } from './runner.js';
import type { LoadedBench } from './registry.js';
import type { ThreadResources } from '../session/session.js';

export interface SweepAxis {
  path: string;
  values: string[];
}

/** Parse `path=v1,v2,...`. */
export function parseAxis(text: string): SweepAxis {
  const eq = text.indexOf('=');
  const path = text.slice(0, eq).trim();
  const values = text.slice(eq + 1).split(',').map((v) => v.trim()).filter((v) => v !== '');
  if (eq <= 0 || path === '' || values.length === 0) throw new UsageError(`--over takes PATH=V1,V2,... (a --set path and its values), got '${text}'`);
  return { path, values };
}

/** Every combination of the axes' values, first axis slowest. */
export function gridPoints(axes: SweepAxis[]): string[][] {
  return axes.reduce<string[][]>((acc, a) => acc.flatMap((p) => a.values.map((v) => [...p, v])), [[]]);
}

export const SWEEP_COLUMNS = ['algorithm', 'topology', 'worldSize', 'nElem', 'dtype', 'ok', 'critNs', 'digest'] as const;

export interface SweepTable {
  columns: string[];
  rows: (string | number | boolean)[][];
  ok: boolean;
}

export async function runSweep(resources: ThreadResources, bench: string | LoadedBench, base: RunConfig, axes: SweepAxis[], progress: (line: string) => void): Promise<SweepTable> {
  const points = gridPoints(axes);
  const rows: (string | number | boolean)[][] = [];
  for (const [i, point] of points.entries()) {
    const sets = point.map((v, j) => `${axes[j].path}=${v}`);
    progress(`[${i + 1}/${points.length}] ${sets.join(' ')}`);
    const out = await runBench(resources, bench, { ...base, sets: [...base.sets, ...sets] }, () => undefined);
    for (const r of out.results) rows.push([...point, ...SWEEP_COLUMNS.map((c) => (r as BenchResult & { digest: string })[c])]);
  }
  return { columns: [...axes.map((a) => a.path), ...SWEEP_COLUMNS], rows, ok: rows.every((r) => r[axes.length + SWEEP_COLUMNS.indexOf('ok')] === true) };
}

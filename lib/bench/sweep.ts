// Runs on: main. Owns: `kernbench sweep` — one bench run at every point of a
// grid of --set values (the cartesian product of `--over path=v1,v2,...`), on
// one set of threads reused across the points, gathered into one table; its
// three renderings (the text table, CSV, JSON lines), shared with `kernbench
// merge` (./merge.ts) so a merged sweep prints byte for byte what the unsharded
// one does; and --shard i/n (counted from 1, as jest, vitest, playwright and
// `node --test-shard` count), which runs grid point k (from 0) only on shard
// (k mod n) + 1. After the fixed columns, a row carries the bench's own
// (BenchResult.sweepColumns: a layer's time breakdown, say), the `time_*` ones
// being the parts of critNs that the plot of where the time goes stacks.
import { createHash } from 'node:crypto';
import { VERSION } from '../config/paths.js';
import { join } from 'node:path';
import { KernbenchError } from '../errors.js';
import type { BenchResult, RunConfig } from './contract.js';
import { runBench } from './runner.js';
import type { LoadedBench } from './registry.js';
import type { ThreadResources } from '../session/thread-resources.js';

export interface SweepAxis {
  path: string;
  values: string[];
}

/** Parse `path=v1,v2,...`. */
export function parseAxis(text: string): SweepAxis {
  const eq = text.indexOf('=');
  const path = text.slice(0, eq).trim();
  const values = text.slice(eq + 1).split(',').map((v) => v.trim()).filter((v) => v !== '');
  if (eq <= 0 || path === '' || values.length === 0) throw new KernbenchError('ERR_INVALID_SWEEP', `--over takes PATH=V1,V2,... (a --set path and its values), got '${text}'`);
  return { path, values };
}

/** Every combination of the axes' values, first axis slowest. */
export function gridPoints(axes: SweepAxis[]): string[][] {
  return axes.reduce<string[][]>((acc, a) => acc.flatMap((p) => a.values.map((v) => [...p, v])), [[]]);
}

/** One shard of a sweep: `index` counts from 1; grid point k (from 0) belongs to shard (k mod count) + 1. */
export interface Shard {
  index: number;
  count: number;
}

/** Does grid point `k` (from 0) belong to `shard`? */
export function inShard(k: number, shard: Shard): boolean {
  return k % shard.count === shard.index - 1;
}

/** `--shard i/n`: 1 <= i <= n, plain decimal digits (so `$SLURM_ARRAY_TASK_ID/4` with --array=1-4). */
export function parseShard(text: string): Shard {
  const m = /^([1-9][0-9]*)\/([1-9][0-9]*)$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(count) || index > count) throw new KernbenchError('ERR_INVALID_SWEEP', `--shard takes I/N with 1 <= I <= N (shard I of N, counted from 1), got '${text}'`);
  return { index, count };
}

export const SWEEP_COLUMNS = ['algorithm', 'topology', 'worldSize', 'nElem', 'dtype', 'ok', 'critNs', 'digest'] as const;
/** A bench column named so is a part of critNs (the parts of a row sum to it). */
export const TIME_PART_PREFIX = 'time_';

/** The columns of `columns` that are parts of critNs, in table order. */
export function timeParts(columns: readonly string[]): string[] {
  return columns.filter((c) => c.startsWith(TIME_PART_PREFIX));
}

/** One segment of a stacked bar of where the time goes: grid point `group`, bar `bar`, part `part`. */
export interface TimeSegment {
  group: string;
  bar: string;
  /** The part's name: its column without `time_` and `_ns` (or crit_ns when the table has no parts). */
  part: string;
  ns: number;
}

/**
 * A table as the segments of its stacked bars: a group per grid point (the
 * axes' values, the columns before `algorithm`), a bar per row (its algorithm,
 * and its topology when the table has several), a segment per time_* column
 * in table order. A table without time_* columns gives one segment per bar,
 * its crit_ns. Groups and bars keep the table's order.
 */
export function timeSegments(columns: readonly string[], rows: readonly Cell[][]): TimeSegment[] {
  const at = (c: string) => columns.indexOf(c);
  const axes = columns.slice(0, Math.max(0, at('algorithm')));
  const topologies = new Set(rows.map((r) => r[at('topology')]));
  const parts = timeParts(columns);
  const partCols = parts.length > 0 ? parts : ['critNs'];
  const name = (c: string) => (c === 'critNs' ? 'crit_ns' : c.slice(TIME_PART_PREFIX.length).replace(/_ns$/, ''));
  return rows.flatMap((r) => {
    const group = axes.map((a, i) => `${a}=${String(r[i])}`).join(' ');
    const bar = topologies.size > 1 ? `${String(r[at('algorithm')])} on ${String(r[at('topology')])}` : String(r[at('algorithm')]);
    return partCols.map((c) => ({ group, bar, part: name(c), ns: Number(r[at(c)]) }));
  });
}

/** The columns a shard's CSV and JSON carry before the sweep's own: which sweep, which shard, which grid point. */
export const SHARD_COLUMNS = ['sweep', 'shard', 'point'] as const;

export type Cell = string | number | boolean;

export interface SweepTable {
  columns: string[];
  rows: Cell[][];
  /** The grid point (0-based, in gridPoints order) of each row. */
  points: number[];
  ok: boolean;
}

/**
 * The identity of a sweep: a hash of what decides its table (the bench, its
 * options after defaults, the configuration and the axes), not of how it runs
 * (--threads, jitter, --shard). Shards of one sweep share it; merge checks it.
 */
export function sweepId(bench: string, options: Record<string, unknown>, config: RunConfig, axes: SweepAxis[]): string {
  const sorted = (o: Record<string, unknown>): [string, unknown][] => Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const what = { bench, options: sorted(options), topology: config.topology, ccl: config.ccl, algorithm: config.algorithm ?? null, sets: config.sets, noData: config.noData ?? false, axes };
  return createHash('sha256').update(JSON.stringify(what)).digest('hex').slice(0, 12);
}

/**
 * Run the grid (or shard `shard` of it). With `traceDir`, each point's last
 * session writes a Chrome trace there (point-K.json, K its grid point) and each
 * row ends with a `trace` column holding that file's path.
 */
export async function runSweep(resources: ThreadResources, bench: string | LoadedBench, base: RunConfig, axes: SweepAxis[], progress: (line: string) => void, shard?: Shard, traceDir?: string): Promise<SweepTable> {
  const all = gridPoints(axes);
  const mine = all.map((p, k) => ({ p, k })).filter(({ k }) => shard === undefined || inShard(k, shard));
  const rows: Cell[][] = [];
  const points: number[] = [];
  const results: BenchResult[] = [];
  for (const [i, { p: point, k }] of mine.entries()) {
    const sets = point.map((v, j) => `${axes[j].path}=${v}`);
    progress(`[${i + 1}/${mine.length}] ${sets.join(' ')}`);
    const trace = traceDir === undefined ? undefined : join(traceDir, `point-${k}.json`);
    const out = await runBench(resources, bench, { ...base, sets: [...base.sets, ...sets], ...(trace ? { trace } : {}) }, () => undefined);
    for (const r of out.results) {
      rows.push([...point, ...SWEEP_COLUMNS.map((c) => (r as BenchResult & { digest: string })[c]), ...(trace ? [trace] : [])]);
      points.push(k);
      results.push(r);
    }
  }
  // The bench's own columns, in the order they first appear; a row without one has ''.
  const own = [...new Set(results.flatMap((r) => Object.keys(r.sweepColumns ?? {})))];
  const fixed = axes.length + SWEEP_COLUMNS.length;
  rows.forEach((row, i) => row.splice(fixed, 0, ...own.map((c) => results[i].sweepColumns?.[c] ?? '')));
  const columns = [...axes.map((a) => a.path), ...SWEEP_COLUMNS, ...own, ...(traceDir === undefined ? [] : ['trace'])];
  return { columns, rows, points, ok: rowsOk(columns, rows) };
}

/** Every row's ok column is true (a CSV's 'true' counts). */
export function rowsOk(columns: string[], rows: Cell[][]): boolean {
  const c = columns.lastIndexOf('ok');
  return rows.every((r) => r[c] === true || r[c] === 'true');
}

/** The text table `kernbench sweep` prints: right-aligned columns, two spaces apart. */
export function formatTable(columns: string[], rows: Cell[][]): string {
  const cells = [columns, ...rows.map((r) => r.map(String))];
  const widths = columns.map((_, c) => Math.max(...cells.map((r) => String(r[c]).length)));
  return cells.map((r) => `  ${r.map((x, c) => String(x).padStart(widths[c])).join('  ')}\n`).join('');
}

function csvCell(v: Cell): string {
  return /[",\n\r]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v);
}

/** CSV text: a header line, one line per row, a final newline. */
export function toCsv(columns: string[], rows: Cell[][]): string {
  return `${[columns.map(csvCell).join(','), ...rows.map((row) => row.map(csvCell).join(','))].join('\n')}\n`;
}

/** One JSON object per row, keys in column order. */
export function toJsonLines(columns: string[], rows: Cell[][]): string {
  return rows.map((row) => `${JSON.stringify(Object.fromEntries(columns.map((c, i) => [c, row[i]])))}\n`).join('');
}

/** A shard's table as its CSV and JSON carry it: sweep id, shard and grid point first. */
export function shardTable(table: SweepTable, id: string, shard: Shard): { columns: string[]; rows: Cell[][] } {
  return {
    columns: [...SHARD_COLUMNS, ...table.columns],
    rows: table.rows.map((r, i) => [id, `${shard.index}/${shard.count}`, table.points[i], ...r]),
  };
}

/** The column a table's CSV and JSON end with: the kernbench version that wrote them (not in the text table). */
export const VERSION_COLUMN = 'kernbench_version';

/** `t` with the version column added, for CSV and JSON output. */
export function withVersion(t: { columns: string[]; rows: Cell[][] }): { columns: string[]; rows: Cell[][] } {
  return { columns: [...t.columns, VERSION_COLUMN], rows: t.rows.map((r) => [...r, VERSION]) };
}

/** `t` without the version column (merge's text table, which prints what the sweep's does). */
export function withoutVersion(t: { columns: string[]; rows: Cell[][] }): { columns: string[]; rows: Cell[][] } {
  const c = t.columns.lastIndexOf(VERSION_COLUMN);
  if (c < 0) return t;
  return { columns: t.columns.filter((_, i) => i !== c), rows: t.rows.map((r) => r.filter((_, i) => i !== c)) };
}

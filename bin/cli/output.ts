// Runs on: main. Owns: how results reach the user — a result as text or as its
// --json line, a run's table as CSV, and the one status line a long command
// keeps on a terminal's stderr.
import { writeFileSync } from 'node:fs';
import type { BenchResult } from '../../lib/bench/contract.js';
import { KernbenchError } from '../../lib/errors.js';
import type { RunStats } from '../../lib/trace/stats.js';
import { runResultLine } from './json-result.js';

/** One result: its lines and a summary line, or its --json line (schemas/run-result.schema.json). */
export function printResult(r: BenchResult & { digest: string }, json: boolean, stats: RunStats | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(runResultLine(r, stats))}\n`);
    return;
  }
  for (const line of r.lines) process.stdout.write(`${line}\n`);
  const extra = r.extra ? Object.entries(r.extra).map(([k, x]) => `  ${k}: ${x}\n`).join('') : '';
  // A verbatim table (nccl-tests' layout) ends stdout; the summary goes beside it.
  (r.verbatim === true ? process.stderr : process.stdout).write(`${extra}  crit_ns: ${r.critNs.toFixed(3)}  (topology ${r.topology}, ws=${r.worldSize}, n_elem=${r.nElem}, ${r.dtype}, digest ${r.digest})\n`);
}

/** The tables of a run as one CSV (results of one bench share their columns), with the version column. The CSV writer is sweep's, imported for --csv only (decision 0205). */
export async function writeCsv(file: string, bench: string, results: BenchResult[]): Promise<void> {
  const tables = results.flatMap((r) => (r.table ? [r.table] : []));
  // The bench declared a table (checked before the run) and returned none: its contract, not the user's flags.
  if (tables.length === 0) throw new KernbenchError('ERR_BENCH_TABLE_MISSING', `--csv: bench '${bench}' declares a table (defineBench({ table: true })) but its results carry none, got ${results.length} result(s) without one`);
  const { toCsv, withVersion } = await import('../../lib/bench/sweep.js');
  const table = withVersion({ columns: tables[0].columns, rows: tables.flatMap((t) => t.rows) });
  writeFileSync(file, toCsv(table.columns, table.rows));
}

export interface StatusLine {
  /** Replace the line with `text` (cut to the terminal's width, so it never wraps). */
  show(text: string): void;
  /** Erase the line and leave the cursor at its start: what follows prints on a clean line. */
  clear(): void;
}

/**
 * The status line of a command on stderr, or undefined when stderr is not a
 * terminal (a pipe, a file, CI): progress is for people watching, never in logs.
 * `\r\x1b[K` returns to the line's start and erases it, so no character of a
 * longer earlier text stays behind.
 */
export function statusLine(stream: NodeJS.WriteStream = process.stderr): StatusLine | undefined {
  if (stream.isTTY !== true) return undefined;
  let shown = false;
  return {
    show(text) {
      const width = stream.columns > 1 ? stream.columns - 1 : 79;
      const line = `  ${text}`;
      stream.write(`\r\x1b[K${line.length > width ? line.slice(0, width) : line}`);
      shown = true;
    },
    clear() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}

// Runs on: main. Owns: the command-line side of the HTML report, declared in
// ./table.ts like every command: `sweep ... --html FILE`
// (writeSweepHtml, after the sweep ran) and `kernbench report FILE.json...
// [--html FILE]` (cmdReport: a page from saved --json results of sweep or run).
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import type { RunConfig } from '../../lib/bench/contract.js';
import { reportHtml, type ReportData } from '../../lib/bench/report.js';
import { SHARD_COLUMNS, SWEEP_COLUMNS, type Cell, type SweepAxis, type SweepTable } from '../../lib/bench/sweep.js';
import { VERSION } from '../../lib/config/paths.js';
import { KernbenchError } from '../../lib/errors.js';
import { commandHelp } from './help.js';
import { parseCommand } from './parse.js';

/** The default page of `kernbench report`, in the current folder. */
export const DEFAULT_REPORT_FILE = 'report.html';


/** The file --html (or `flag`: --plot) names, checked before the run: its folder must exist. undefined without the flag. */
export function sweepHtmlTarget(value: unknown, flag = 'html'): string | undefined {
  if (typeof value !== 'string') return undefined;
  const file = resolve(value);
  if (!existsSync(dirname(file)) || !statSync(dirname(file)).isDirectory()) throw new KernbenchError('ERR_UNWRITABLE_OUTPUT', `--${flag}: cannot write ${file}: its folder does not exist, got '${value}'`);
  return file;
}

/** --trace-dir DIR made (with its parents) before the sweep; undefined without the flag. */
export function traceDirOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const dir = resolve(value);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A trace path as a link from the page's folder. */
const linkFrom = (page: string, trace: string): string => relative(dirname(page), resolve(trace)).split('\\').join('/');

function tracesOf(page: string, columns: string[], rows: Cell[][]): ReportData['traces'] {
  const c = columns.indexOf('trace');
  if (c < 0) return [];
  return rows.filter((r) => typeof r[c] === 'string' && r[c] !== '').map((r) => ({ label: String(r[c]), href: linkFrom(page, String(r[c])) }));
}

/** `sweep --html FILE`: the page of the table the sweep just printed. */
export async function writeSweepHtml(file: string, s: { bench: string; config: RunConfig; axes: SweepAxis[]; table: SweepTable; argv: string[] }): Promise<void> {
  const { config, table } = s;
  const topoCol = table.columns.indexOf('topology');
  const data: ReportData = {
    title: `kernbench sweep --bench ${s.bench}`,
    columns: table.columns,
    rows: table.rows,
    params: [
      ['bench', s.bench],
      ['grid', s.axes.map((a) => `--over ${a.path}=${a.values.join(',')}`).join(' ')],
      ['topology', config.topology],
      ['ccl', config.ccl],
      ['algorithm', config.algorithm ?? '(the CCL file\'s default)'],
      ['--set', config.sets.join(' ') || '(none)'],
      ['threads', String(config.threads)],
      ['data', config.noData ? 'timing only (--no-data)' : 'moved and checked'],
      ['bench options', JSON.stringify(config.options ?? {})],
      ['command', `kernbench sweep ${s.argv.join(' ')}`],
    ],
    version: VERSION,
    traces: tracesOf(file, table.columns, table.rows),
    topologies: [...new Set(table.rows.map((r) => String(r[topoCol])))],
    sets: config.sets,
  };
  writeFileSync(file, reportHtml(data));
  process.stderr.write(`wrote ${file}\n`);
}

/** Rows of saved results: JSON lines (sweep --json) or objects (run --json), each with the sweep's columns. */
function readResults(files: string[]): { columns: string[]; rows: Cell[][]; versions: Set<string> } {
  const objects: { file: string; line: number; o: Record<string, unknown> }[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new KernbenchError('ERR_UNREADABLE_INPUT', `report: cannot read ${resolve(file)}: ${(e as NodeJS.ErrnoException).code ?? String(e)}, got '${file}'`);
    }
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let o: unknown;
      try {
        o = JSON.parse(line);
      } catch {
        throw new KernbenchError('ERR_REPORT_INPUT', `report: ${file}:${i + 1} is not a JSON line (save results with sweep --json or run --json), got '${line.slice(0, 40)}'`);
      }
      const missing = SWEEP_COLUMNS.filter((c) => typeof o !== 'object' || o === null || !(c in o));
      if (missing.length > 0) throw new KernbenchError('ERR_REPORT_INPUT', `report: ${file}:${i + 1} is not a kernbench result (it lacks ${missing.join(', ')}), got keys ${typeof o === 'object' && o !== null ? Object.keys(o).join(', ') : typeof o}`);
      objects.push({ file, line: i + 1, o: o as Record<string, unknown> });
    });
  }
  if (objects.length === 0) throw new KernbenchError('ERR_REPORT_INPUT', `report: no results in ${files.join(', ')}, got empty files`);
  // Columns: the grid's axes (keys with a dot) first, then the sweep's, then a trace if any row has one.
  const axes = [...new Set(objects.flatMap(({ o }) => Object.keys(o).filter((k) => k.includes('.'))))];
  // The bench's own columns (sweep.ts: a layer's time breakdown): the other keys holding numbers.
  const known = new Set<string>([...SWEEP_COLUMNS, ...SHARD_COLUMNS, 'worldSize', 'nElem', 'critNs']);
  const own = [...new Set(objects.flatMap(({ o }) => Object.keys(o).filter((k) => !k.includes('.') && !known.has(k) && typeof o[k] === 'number')))];
  const columns = [...axes, ...SWEEP_COLUMNS, ...own, ...(objects.some(({ o }) => typeof o.trace === 'string') ? ['trace'] : [])];
  const cell = (v: unknown): Cell => (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));
  return { columns, rows: objects.map(({ o }) => columns.map((c) => cell(o[c]))), versions: new Set(objects.map(({ o }) => (typeof o.version === 'string' ? o.version : 'not recorded'))) };
}

/** `kernbench report FILE.json... [--html FILE]`. */
export async function cmdReport(args: string[]): Promise<number> {
  const parsed = parseCommand('report', args) as { values: { html?: string; help?: boolean }; positionals: string[] };
  if (parsed.values.help === true) {
    process.stdout.write(commandHelp('report'));
    return 0;
  }
  if (parsed.positionals.length === 0) throw new KernbenchError('ERR_MISSING_ARGUMENT', 'report needs the saved results (sweep --json > FILE.json), got no file');
  const file = sweepHtmlTarget(parsed.values.html ?? DEFAULT_REPORT_FILE) as string;
  const { columns, rows, versions } = readResults(parsed.positionals);
  const topoCol = columns.indexOf('topology');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    reportHtml({
      title: `kernbench report: ${parsed.positionals.join(', ')}`,
      columns,
      rows,
      params: [
        ['results', parsed.positionals.map((f) => resolve(f)).join(' ')],
        ['kernbench version of the results', [...versions].join(', ')],
      ],
      version: VERSION,
      traces: tracesOf(file, columns, rows),
      topologies: [...new Set(rows.map((r) => String(r[topoCol])))],
      sets: [],
    }),
  );
  process.stderr.write(`wrote ${file}\n`);
  return 0;
}

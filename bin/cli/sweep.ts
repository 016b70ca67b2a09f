// Runs on: main. Owns: `kernbench sweep` (a bench at every point of a grid of
// --set values, one table; --shard runs one shard of the grid) and `kernbench
// merge` (the shards' files joined into the unsharded sweep's table).
import { writeFileSync } from 'node:fs';
import { benchOptions } from '../../lib/bench/runner.js';
import { mergeShards } from '../../lib/bench/merge.js';
import { formatTable, parseAxis, parseShard, rowsOk, runSweep, shardTable, sweepId, timeSegments, toCsv, toJsonLines, withoutVersion, withVersion, type Shard } from '../../lib/bench/sweep.js';
import { loadPlotting, timeBreakdownChart } from '../../lib/bench/plots.js';
import { KernbenchError } from '../../lib/errors.js';
import { ThreadResources } from '../../lib/session/thread-resources.js';
import { benchHelp, commandHelp } from './help.js';
import { checkWritable, configFrom, preflight } from './inputs.js';
import { sweepHtmlTarget, traceDirOf, writeSweepHtml } from './report.js';
import { statusLine } from './output.js';
import { parseBenchArgs, parseCommand } from './parse.js';

export async function cmdSweep(args: string[], threads: ThreadResources | undefined): Promise<number> {
  const b = await parseBenchArgs('sweep', args);
  if (b === 'help' || b.values.help === true) {
    process.stdout.write(b === 'help' ? commandHelp('sweep') : benchHelp('sweep', b.loaded));
    return 0;
  }
  const v = b.values;
  const axes = ((v.over as string[] | undefined) ?? []).map(parseAxis);
  if (axes.length === 0) throw new KernbenchError('ERR_MISSING_ARGUMENT', 'sweep needs at least one --over PATH=V1,V2,..., got none');
  const config = configFrom(v, b.options);
  const shard: Shard | undefined = typeof v.shard === 'string' ? parseShard(v.shard) : undefined;
  const gridSize = axes.reduce((n, a) => n * a.values.length, 1);
  if (shard && shard.count > gridSize) throw new KernbenchError('ERR_INVALID_SWEEP', `--shard: ${shard.count} shards for a grid of ${gridSize} points would leave shards empty; use at most ${gridSize}, got '${v.shard as string}'`);
  preflight(b, config, false);
  const html = sweepHtmlTarget(v.html);
  const plot = sweepHtmlTarget(v.plot, 'plot');
  // A missing plotting package is found before the work, not after it (decision 0057).
  if (plot !== undefined) await loadPlotting();
  const resources = threads ?? new ThreadResources();
  const status = statusLine();
  try {
    const table = await runSweep(resources, b.loaded, config, axes, (line) => status?.show(line), shard, traceDirOf(v['trace-dir'])).finally(() => status?.clear());
    // A shard's CSV and JSON carry the sweep's identity, the shard and each row's grid point (for merge).
    const out = withVersion(shard ? shardTable(table, sweepId(b.loaded.name, benchOptions(b.loaded, config), config, axes), shard) : table);
    if (v.json === true) process.stdout.write(toJsonLines(out.columns, out.rows));
    else process.stdout.write(shard ? formatTable(['point', ...table.columns], table.rows.map((r, i) => [table.points[i], ...r])) : formatTable(table.columns, table.rows));
    if (typeof v.csv === 'string') writeFileSync(v.csv, toCsv(out.columns, out.rows.map((r) => r.map(String))));
    if (html !== undefined) await writeSweepHtml(html, { bench: b.loaded.name, config, axes, table, argv: args });
    if (plot !== undefined) {
      writeFileSync(plot, await timeBreakdownChart(`kernbench sweep --bench ${b.loaded.name}: where the time goes`, timeSegments(table.columns, table.rows)));
      process.stderr.write(`wrote ${plot}\n`);
    }
    return table.ok ? 0 : 1;
  } finally {
    if (threads === undefined) await resources.close();
  }
}

/**
 * `kernbench merge FILE... [--csv F] [--json]`: the shards' files joined into the
 * table, CSV and JSON the unsharded sweep gives (JSON output needs JSON inputs:
 * CSV cells do not say whether '2' was a number or a --over value).
 */
export function cmdMerge(args: string[]): number {
  const { values: v, positionals } = parseCommand('merge', args);
  if (v.help === true) {
    process.stdout.write(commandHelp('merge'));
    return 0;
  }
  if (typeof v.csv === 'string') checkWritable('csv', v.csv);
  const merged = mergeShards(positionals);
  if (v.json === true && merged.format !== 'json') throw new KernbenchError('ERR_MERGE_INPUT', `merge --json needs the shards' --json files (CSV cells have no types), got CSV files`);
  const text = withoutVersion(merged);
  process.stdout.write(v.json === true ? toJsonLines(merged.columns, merged.rows) : formatTable(text.columns, text.rows));
  if (typeof v.csv === 'string') writeFileSync(v.csv, toCsv(merged.columns, merged.rows.map((r) => r.map(String))));
  return rowsOk(merged.columns, merged.rows) ? 0 : 1;
}

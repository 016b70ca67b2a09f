// Runs on: main. Owns: `kernbench run` — one bench under one configuration, its
// results as text or --json lines, --stats, --log, --csv, and the progress line
// a long run keeps on a terminal.
import type { RunConfig } from '../../lib/bench/contract.js';
import type { RunProgress } from '../../lib/bench/progress.js';
import { runBench } from '../../lib/bench/runner.js';
import { DeadlockError } from '../../lib/errors.js';
import { ThreadResources } from '../../lib/session/thread-resources.js';
import { statsTable } from '../../lib/trace/stats.js';
import { commandHelp, benchHelp } from './help.js';
import { configFrom, preflight } from './inputs.js';
import { printResult, statusLine, writeCsv } from './output.js';
import { parseBenchArgs } from './parse.js';

/** The progress line of a run: `virtual time 1.234 us, 5678 messages, 3 ranks done`. */
export function progressText(p: RunProgress): string {
  return `running: virtual time ${(p.virtualPs / 1e6).toFixed(3)} us, ${p.messages} messages, ${p.ranksDone} rank${p.ranksDone === 1 ? '' : 's'} done`;
}

export async function cmdRun(args: string[], threads: ThreadResources | undefined): Promise<number> {
  const b = await parseBenchArgs('run', args);
  if (b === 'help' || b.values.help === true) {
    process.stdout.write(b === 'help' ? commandHelp('run') : benchHelp('run', b.loaded));
    return 0;
  }
  const v = b.values;
  const json = v.json === true;
  const out = json ? process.stderr : process.stdout;
  const status = statusLine();
  const config: RunConfig = {
    ...configFrom(v, b.options),
    // Statistics are recorded for --stats and carried in every --json result.
    stats: v.stats === true || json,
    ...(v.log === true ? { eventLog: (lines: string[]) => out.write(lines.map((l) => `${l}\n`).join('')) } : {}),
    ...(status ? { progress: (p: RunProgress) => status.show(progressText(p)) } : {}),
  };
  preflight(b, config, true);
  const resources = threads ?? new ThreadResources();
  try {
    const log = (line: string): void => {
      status?.clear();
      out.write(`${line}\n`);
    };
    const outcome = await runBench(resources, b.loaded, config, log)
      .catch((e: unknown) => {
        // The error's message is the deadlock's summary; --verbose adds each waiter's line.
        if (v.verbose === true && e instanceof DeadlockError) process.stderr.write(`kernbench: every waiter of the deadlock (${e.waiters.length}):\n${e.waiters.map((w) => `  ${w}\n`).join('')}`);
        throw e;
      })
      .finally(() => status?.clear());
    for (const r of outcome.results) printResult(r, json, outcome.stats);
    if (!json && v.stats === true && outcome.stats) for (const line of statsTable(outcome.stats)) process.stdout.write(`${line}\n`);
    if (typeof v.csv === 'string') writeCsv(v.csv, b.loaded.name, outcome.results);
    return outcome.results.every((r) => r.ok) ? 0 : 1;
  } finally {
    if (threads === undefined) await resources.close();
  }
}

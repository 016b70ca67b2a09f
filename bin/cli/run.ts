// Runs on: main. Owns: `kernbench run` — one bench under one configuration, its
// results as text or --json lines, --stats, --log, --csv, and the progress line
// a long run keeps on a terminal.
import type { RunConfig } from '../../lib/bench/contract.js';
import type { RunProgress } from '../../lib/bench/progress.js';
import { runBench } from '../../lib/bench/runner.js';
import { DeadlockError, KernbenchError, RunStoppedError } from '../../lib/errors.js';
import { Watchdog } from '../../lib/session/watchdog.js';
import { parseSeconds } from '../../lib/bench/stress.js';
import { ThreadResources } from '../../lib/session/thread-resources.js';
import { statsTable } from '../../lib/trace/stats.js';
import { configFrom, preflight } from './inputs.js';
import { printResult, statusLine, writeCsv } from './output.js';
import { parseBenchArgs, prescan, type BenchArgs } from './parse.js';

/** The progress line of a run: `virtual time 1.234 us, 5678 messages, 3 ranks done`. */
export function progressText(p: RunProgress): string {
  return `running: virtual time ${(p.virtualPs / 1e6).toFixed(3)} us, ${p.messages} messages, ${p.ranksDone} rank${p.ranksDone === 1 ? '' : 's'} done`;
}

/** The --max-virtual-time value (ns, as written) in ps. */
function parseVirtualTimeLimit(text: string): number {
  const ns = Number(text);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text) || !(ns > 0) || !Number.isSafeInteger(Math.round(ns * 1000))) throw new KernbenchError('ERR_INVALID_FLAG_VALUE', `--max-virtual-time takes a positive number of nanoseconds, got '${text}'`);
  return Math.round(ns * 1000);
}

export async function cmdRun(args: string[], threads: ThreadResources | undefined): Promise<number> {
  const pre = prescan(args);
  const timeoutS = pre.timeout === undefined || pre.help ? undefined : parseSeconds('timeout', pre.timeout);
  // A run that starts many threads says what they cost (decision 0130).
  const resources = threads ?? new ThreadResources({ onNote: (line) => process.stderr.write(`${line}\n`) });
  // Armed before the bench loads: its import may be what never ends. In the binary the
  // timeout is kept off main, so a synchronous loop on main ends too (lib/session/watchdog.ts).
  const watchdog = new Watchdog(resources, { timeoutS, interruptMain: threads === undefined });
  // Ctrl-C stops the run with the same report; from after the bench has loaded (decision 0095).
  const interrupted = (): void => watchdog.stop('ERR_INTERRUPTED', 'interrupted (SIGINT)');
  try {
    const b = await Promise.race([parseBenchArgs('run', args), watchdog.stopped]);
    if (b === 'help' || b.values.help === true) {
      const { commandHelp, benchHelp } = await import('./help.js'); // the help text only when asked (decision 0205)
      process.stdout.write(b === 'help' ? commandHelp('run') : benchHelp('run', b.loaded));
      return 0;
    }
    process.on('SIGINT', interrupted);
    return await runParsed(b, resources, watchdog);
  } catch (e) {
    if (e instanceof RunStoppedError) {
      // The run's threads may be busy forever (a kernel in a loop): they are ended, not joined.
      await resources.terminate();
      const v = prescanVerbose(args);
      if (v.verbose) process.stderr.write(`kernbench: every active actor (${e.actors.length}):\n${e.actors.map((a) => `  ${a.line}\n`).join('')}`);
      if (v.json) process.stdout.write(`${JSON.stringify({ error: { name: e.name, code: e.code, summary: e.summary, actors: e.actors } })}\n`);
    }
    throw e;
  } finally {
    process.off('SIGINT', interrupted);
    watchdog.dispose();
    if (threads === undefined) await resources.close();
  }
}

/** --verbose and --json as given, for a run stopped before its flags could be parsed against the bench's. */
function prescanVerbose(args: string[]): { verbose: boolean; json: boolean } {
  return { verbose: args.includes('--verbose'), json: args.includes('--json') };
}

async function runParsed(b: BenchArgs, resources: ThreadResources, watchdog: Watchdog): Promise<number> {
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
    ...(typeof v['max-virtual-time'] === 'string' ? { maxVirtualTimePs: parseVirtualTimeLimit(v['max-virtual-time']) } : {}),
  };
  preflight(b, config, true);
  {
    const log = (line: string): void => {
      status?.clear();
      out.write(`${line}\n`);
    };
    const run = runBench(resources, b.loaded, config, log);
    run.catch(() => undefined); // a stopped run's own end is not waited for
    const outcome = await Promise.race([run, watchdog.stopped])
      .catch((e: unknown) => {
        // The error's message is the deadlock's summary; --verbose adds each waiter's line.
        if (v.verbose === true && e instanceof DeadlockError) process.stderr.write(`kernbench: every waiter of the deadlock (${e.waiters.length}):\n${e.waiters.map((w) => `  ${w}\n`).join('')}`);
        throw e;
      })
      .finally(() => status?.clear());
    for (const r of outcome.results) printResult(r, json, outcome.stats);
    if (!json && v.stats === true && outcome.stats) for (const line of statsTable(outcome.stats)) process.stdout.write(`${line}\n`);
    if (typeof v.csv === 'string') await writeCsv(v.csv, b.loaded.name, outcome.results);
    return outcome.results.every((r) => r.ok) ? 0 : 1;
  }
}

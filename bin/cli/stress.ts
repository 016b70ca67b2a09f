// Runs on: main. Owns: `kernbench stress` — every jitter seed under every layout,
// compared with the reference run; the report (text or TAP) and, per run, the
// `kernbench run` line that repeats it.
import { DEFAULT_STRESS_LAYOUTS, DEFAULT_STRESS_SEEDS, DEFAULT_STRESS_TIMEOUT_S, formatStress, formatTap, parseCount, parseLayouts, parseSeconds, runStress, shellQuote, type StressPoint } from '../../lib/bench/stress.js';
import { optionInfos } from '../../lib/bench/options.js';
import { benchHelp, commandHelp } from './help.js';
import { configFrom, preflight } from './inputs.js';
import { statusLine } from './output.js';
import { parseBenchArgs, prescan, type BenchArgs } from './parse.js';

/**
 * The `kernbench run` line that repeats one stress run: the bench as given, the
 * user's configuration flags and bench options, the point's layout, and its seed
 * as KERNBENCH_JITTER.
 */
function reproduceCommand(b: BenchArgs, benchArg: string, point: StressPoint): string {
  const v = b.values;
  const words = ['kernbench', 'run', '--bench', benchArg];
  for (const flag of ['topology', 'ccl', 'algorithm'] as const) if (typeof v[flag] === 'string') words.push(`--${flag}`, v[flag] as string);
  for (const s of (v.set as string[] | undefined) ?? []) words.push('--set', s);
  for (const o of optionInfos(b.loaded.bench.options)) {
    const x = b.options[o.field];
    if (x === true) words.push(`--${o.flag}`);
    else if (typeof x === 'string') words.push(`--${o.flag}`, x);
  }
  if (v['no-data'] === true) words.push('--no-data');
  words.push('--threads', String(point.threads));
  const line = words.map(shellQuote).join(' ');
  return point.seed === null ? line : `KERNBENCH_JITTER=${point.seed} ${line}`;
}

export async function cmdStress(args: string[]): Promise<number> {
  const b = await parseBenchArgs('stress', args);
  if (b === 'help' || b.values.help === true) {
    process.stdout.write(b === 'help' ? commandHelp('stress') : benchHelp('stress', b.loaded));
    return 0;
  }
  const v = b.values;
  const layouts = typeof v.threads === 'string' ? parseLayouts(v.threads) : DEFAULT_STRESS_LAYOUTS;
  const seeds = typeof v.seeds === 'string' ? parseCount('seeds', v.seeds) : DEFAULT_STRESS_SEEDS;
  const timeoutS = typeof v.timeout === 'string' ? parseSeconds('timeout', v.timeout) : DEFAULT_STRESS_TIMEOUT_S;
  const config = configFrom(v, b.options, true);
  preflight(b, config, false);
  const benchArg = prescan(args).bench ?? b.loaded.name;
  const status = statusLine();
  const report = await runStress(b.loaded, config, {
    seeds,
    layouts,
    timeoutMs: timeoutS * 1000,
    command: (p) => reproduceCommand(b, benchArg, p),
    progress: status ? (done, total, label) => status.show(`[${done + 1}/${total}] ${label}`) : undefined,
  }).finally(() => status?.clear());
  process.stdout.write(v.tap === true ? formatTap(b.loaded.name, report) : formatStress(b.loaded.name, report));
  return report.ok ? 0 : 1;
}

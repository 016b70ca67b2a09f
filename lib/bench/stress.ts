// Runs on: main. Owns: `kernbench stress` — one bench run at every point of a
// matrix of jitter seeds x thread layouts, each compared (digest and crit_ns of
// every result) with the reference run (--threads 1, no jitter); the report of
// what differed, deadlocked, failed or timed out (text or TAP version 13, which Perl's prove and tap-parser both read), each with the
// command that reproduces it.
//
// The runs are in-process, on one set of threads reused across the points
// (docs/decisions/0017-stress-runs-in-process.md); a run that outlives its
// timeout is reported and its threads are terminated and replaced.
import { KernbenchError } from '../errors.js';
import type { RunConfig } from './contract.js';
import { runBench, type RunOutcome } from './runner.js';
import type { LoadedBench } from './registry.js';
import { ThreadResources } from '../session/thread-resources.js';
import type { ThreadLayout } from '../config/plan.js';
import { parseThreadLayout } from '../config/plan.js';

export const DEFAULT_STRESS_SEEDS = 4;
export const DEFAULT_STRESS_LAYOUTS: ThreadLayout[] = [1, 'rank', 'pe', 2];
export const DEFAULT_STRESS_TIMEOUT_S = 300;

/** `1,rank,pe,2`: the layouts to run, each as --threads takes it. */
export function parseLayouts(text: string): ThreadLayout[] {
  const parts = text.split(',').map((s) => s.trim());
  if (parts.some((p) => p === '')) throw new KernbenchError('ERR_INVALID_THREADS', `--threads takes a comma-separated list of layouts (rank, pe or a positive integer), got '${text}'`);
  const layouts = parts.map(parseThreadLayout);
  const seen = new Set<string>();
  for (const l of layouts) {
    if (seen.has(String(l))) throw new KernbenchError('ERR_INVALID_THREADS', `--threads lists '${l}' twice, got '${text}'`);
    seen.add(String(l));
  }
  return layouts;
}

/** A positive integer given as plain decimal digits (the count of seeds). */
export function parseCount(flag: string, text: string): number {
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) throw new KernbenchError('ERR_INVALID_FLAG_VALUE', `--${flag} takes a positive integer, got '${text}'`);
  return Number(text);
}

/** A positive number of seconds. */
export function parseSeconds(flag: string, text: string): number {
  const n = Number(text);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text) || !(n > 0)) throw new KernbenchError('ERR_INVALID_FLAG_VALUE', `--${flag} takes a positive number of seconds, got '${text}'`);
  return n;
}

export interface StressPoint {
  /** null for no jitter. */
  seed: number | null;
  threads: ThreadLayout;
}

export type Outcome = 'same' | 'diverged' | 'deadlock' | 'failed' | 'timeout' | 'skipped';

export interface PointReport {
  point: StressPoint;
  /** Its label in reports: `seed 3, --threads rank`. */
  label: string;
  outcome: Outcome;
  /** What differed or went wrong (empty when the same). */
  details: string[];
  /** The error code of a failure (ERR_DEADLOCK, ERR_KERNEL, ...). */
  code?: string;
  /** The command that reproduces this run. */
  command: string;
}

export interface StressReport {
  points: PointReport[];
  ok: boolean;
}

export function pointLabel(p: StressPoint): string {
  return p.seed === null ? `reference: --threads ${p.threads}, no jitter` : `seed ${p.seed}, --threads ${p.threads}`;
}

/** The reference first, then every seed (1..seeds) under every layout. */
export function stressPoints(seeds: number, layouts: ThreadLayout[]): StressPoint[] {
  const pts: StressPoint[] = [{ seed: null, threads: 1 }];
  for (let s = 1; s <= seeds; s++) for (const threads of layouts) pts.push({ seed: s, threads });
  return pts;
}

/** A word as a POSIX shell reads it back unchanged. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

type RunResult = { kind: 'done'; outcome: RunOutcome } | { kind: 'error'; error: unknown } | { kind: 'timeout' };

/**
 * Run `bench` at every point of the matrix and compare each with the reference.
 * `command(point)` is the `kernbench run ...` line that reproduces a point;
 * `progress` hears each point before it runs.
 */
export async function runStress(
  bench: LoadedBench,
  base: RunConfig,
  opts: { seeds: number; layouts: ThreadLayout[]; timeoutMs: number; command: (p: StressPoint) => string; progress?: (done: number, total: number, label: string) => void },
): Promise<StressReport> {
  const points = stressPoints(opts.seeds, opts.layouts);
  const reports: PointReport[] = [];
  let resources = new ThreadResources();
  let reference: RunOutcome | undefined;
  try {
    for (const [i, point] of points.entries()) {
      const label = pointLabel(point);
      const command = opts.command(point);
      if (i > 0 && reference === undefined) {
        reports.push({ point, label, outcome: 'skipped', details: ['the reference run failed: nothing to compare with'], command });
        continue;
      }
      opts.progress?.(i, points.length, label);
      const r = await runWithTimeout(resources, bench, { ...base, threads: point.threads, jitterSeed: point.seed }, opts.timeoutMs);
      if (r.kind === 'timeout') {
        // The hung run keeps its threads: terminate them (without waiting on the run) and start afresh.
        const old = resources;
        resources = new ThreadResources();
        await old.close().catch(() => undefined);
        reports.push({ point, label, outcome: 'timeout', details: [`no answer within ${opts.timeoutMs / 1000} s`], command });
        continue;
      }
      if (r.kind === 'error') {
        const e = r.error;
        const code = e instanceof KernbenchError ? e.code : undefined;
        const message = e instanceof Error ? e.message : String(e);
        reports.push({ point, label, outcome: code === 'ERR_DEADLOCK' ? 'deadlock' : 'failed', code, details: message.split('\n'), command });
        continue;
      }
      const notOk = r.outcome.results.flatMap((x, k) => (x.ok ? [] : [`result ${k} (${x.algorithm}, ws=${x.worldSize}) is not ok`]));
      if (notOk.length > 0) {
        reports.push({ point, label, outcome: 'failed', details: notOk, command });
        continue;
      }
      if (i === 0) {
        reference = r.outcome;
        reports.push({ point, label, outcome: 'same', details: [], command });
        continue;
      }
      const diffs = compare(reference!, r.outcome);
      reports.push({ point, label, outcome: diffs.length === 0 ? 'same' : 'diverged', details: diffs, command });
    }
  } finally {
    await resources.close();
  }
  return { points: reports, ok: reports.every((p) => p.outcome === 'same') };
}

async function runWithTimeout(resources: ThreadResources, bench: LoadedBench, config: RunConfig, timeoutMs: number): Promise<RunResult> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<RunResult>((r) => (timer = setTimeout(() => r({ kind: 'timeout' }), timeoutMs)));
  const run = runBench(resources, bench, config, () => undefined).then(
    (outcome): RunResult => ({ kind: 'done', outcome }),
    (error: unknown): RunResult => ({ kind: 'error', error }),
  );
  try {
    return await Promise.race([run, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What differs between the reference and a run: result count, each result's digest and crit_ns. */
function compare(ref: RunOutcome, run: RunOutcome): string[] {
  const out: string[] = [];
  if (ref.results.length !== run.results.length) out.push(`${run.results.length} results, reference ${ref.results.length}`);
  const n = Math.min(ref.results.length, run.results.length);
  for (let k = 0; k < n; k++) {
    const a = ref.results[k];
    const b = run.results[k];
    const what = ref.results.length > 1 ? `result ${k} ` : '';
    if (a.digest !== b.digest) out.push(`${what}digest ${b.digest}, reference ${a.digest}`);
    if (a.critNs !== b.critNs) out.push(`${what}crit_ns ${b.critNs}, reference ${a.critNs}`);
  }
  return out;
}

function counts(report: StressReport): string {
  const n = (o: Outcome): number => report.points.filter((p) => p.outcome === o).length;
  const parts = [`${n('same')} same`, `${n('diverged')} diverged`, `${n('deadlock')} deadlocked`, `${n('failed')} failed`, `${n('timeout')} timed out`];
  if (n('skipped') > 0) parts.push(`${n('skipped')} skipped`);
  return `${report.points.length} runs: ${parts.join(', ')}`;
}

/** The human report: each run that is not the same, with its reproduce command, then a summary line. */
export function formatStress(bench: string, report: StressReport): string {
  const lines: string[] = [];
  for (const p of report.points) {
    if (p.outcome === 'same') continue;
    lines.push(`${p.outcome.toUpperCase()}: ${p.label}${p.code ? ` [${p.code}]` : ''}`);
    for (const d of p.details) lines.push(`  ${d}`);
    lines.push(`  reproduce: ${p.command}`);
  }
  lines.push(`stress ${bench}: ${counts(report)}: ${report.ok ? 'ok' : 'NOT OK'}`);
  return `${lines.join('\n')}\n`;
}

/** A YAML double-quoted scalar (a JSON string is one). */
/**
 * A YAML double-quoted scalar that TAP's YAMLish readers parse too. Perl's
 * (prove) takes a list item whose first word ends in a colon (`- "deadlock: ..."`)
 * for a mapping and fails, so every colon is written as the escape \x3a, which
 * both YAML 1.2 and YAMLish read back as ':'.
 */
const yamlString = (s: string): string => JSON.stringify(s).replace(/:/g, '\\x3a');

/** TAP version 13: a plan, one test point per run, YAML diagnostics for each that is not ok. */
export function formatTap(bench: string, report: StressReport): string {
  const lines = ['TAP version 13', `1..${report.points.length}`];
  for (const [i, p] of report.points.entries()) {
    const desc = p.label.replace(/#/g, '\\#');
    if (p.outcome === 'same') {
      lines.push(`ok ${i + 1} - ${desc}`);
      continue;
    }
    if (p.outcome === 'skipped') {
      lines.push(`ok ${i + 1} - ${desc} # SKIP ${p.details[0]}`);
      continue;
    }
    lines.push(`not ok ${i + 1} - ${desc}`);
    lines.push('  ---');
    lines.push(`  outcome: ${p.outcome}`);
    if (p.code) lines.push(`  code: ${p.code}`);
    lines.push(`  seed: ${p.point.seed === null ? 'null' : p.point.seed}`);
    lines.push(`  threads: ${yamlString(String(p.point.threads))}`);
    lines.push('  details:');
    for (const d of p.details) lines.push(`    - ${yamlString(d)}`);
    lines.push(`  command: ${yamlString(p.command)}`);
    lines.push('  ...');
  }
  lines.push(`# stress ${bench}: ${counts(report)}`);
  return `${lines.join('\n')}\n`;
}

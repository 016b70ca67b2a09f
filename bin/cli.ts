// Runs on: main. Owns: the kernbench command line — parsing, dispatch to
// run / sweep / stress / merge / list / validate, output formats and exit codes:
//   0 everything ran and every result is ok
//   1 a bench result is not ok, or the run failed (kernel error, deadlock, ...);
//     for stress, any run that diverged, deadlocked, failed or timed out
//   2 usage or configuration error (no stack trace)
import { closeSync, openSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_CCL_FILE, DEFAULT_TOPOLOGY, listTopologies, topologyPath } from '../lib/config/paths.js';
import { loadCclFile, loadTopology } from '../lib/config/load.js';
import { algorithmCatalog } from '../lib/ccl/catalog.js';
import { checkSessionMemory } from '../lib/sync/plan.js';
import { sipKinds } from '../lib/topology/kind-catalog.js';
import { paramsLine } from '../lib/ccl/define-algorithm.js';
import { resolveRunCcl } from '../lib/ccl/resolve.js';
import { KernbenchError, UsageError } from '../lib/errors.js';
import type { BenchResult, RunConfig } from '../lib/bench/contract.js';
import { optionInfos, optionsHelp } from '../lib/bench/options.js';
import { listBenches, loadBench, type LoadedBench } from '../lib/bench/registry.js';
import { benchOptions, runBench } from '../lib/bench/runner.js';
import { formatTable, parseAxis, parseShard, runSweep, shardTable, sweepId, toCsv, toJsonLines, rowsOk, type Shard } from '../lib/bench/sweep.js';
import { DEFAULT_STRESS_LAYOUTS, DEFAULT_STRESS_SEEDS, DEFAULT_STRESS_TIMEOUT_S, formatStress, formatTap, parseCount, parseLayouts, parseSeconds, runStress, shellQuote, type StressPoint } from '../lib/bench/stress.js';
import { mergeShards } from '../lib/bench/merge.js';
import { DEFAULT_THREADS, parseThreadLayout } from '../lib/sync/plan.js';
import { jitterSeedFromEnv } from '../lib/sync/jitter.js';
import { ThreadResources } from '../lib/session/session.js';
import { statsTable, type RunStats } from '../lib/trace/stats.js';
import { cmdReport, REPORT_HELP, sweepHtmlTarget, traceDirOf, writeSweepHtml } from './report-cli.js';

const HELP = `kernbench — a deterministic, multi-threaded simulator of a multi-chip AI accelerator

Usage:
  kernbench run --bench B [options] [bench options]
                                         run a bench and print its results
  kernbench run --bench B --help         the bench's own options, with their defaults
  kernbench sweep --bench B --over PATH=V1,V2,... [--over ...] [options] [bench options]
                                         run a bench at every point of a grid of --set values; one table
  kernbench sweep ... --shard I/N --csv F   run shard I (0 <= I < N) of the grid: point k when k mod N = I
  kernbench merge FILE... [--csv F] [--json]
                                         join the shards' CSV (or JSON) files into the unsharded sweep's table
  kernbench stress --bench B [--seeds N] [--threads 1,rank,pe,2] [--timeout S] [--tap] [options]
                                         run every jitter seed under every layout; compare each run's digest and
                                         crit_ns with --threads 1 without jitter; exit 1 on any difference
${REPORT_HELP}  kernbench list                         list benches (with their options), topologies and algorithms
  kernbench validate [--topology F] [--ccl F] [--set k=v ...]
                                         check configuration files and report every problem
  kernbench --help

Options for run:
  --bench B           a shipped bench's name (see 'kernbench list'), or the path of a bench
                      module (.ts, .mts, .js, .mjs; absolute or relative to the current directory)
  --topology F        topology name in topologies/ or a path (default: ${DEFAULT_TOPOLOGY})
  --ccl F             CCL file (default: topologies/ccl.yaml)
  --algorithm NAME    algorithm entry of the CCL file (default: its defaults.algorithm)
  --threads L         rank (one executor per SIP, default) | pe (one per PE) | N (N executors; 1 is the reference)
  --over PATH=V1,V2   (sweep) an axis of the grid: a --set path and its values; repeatable
  --shard I/N         (sweep) run only grid points k with k mod N = I (0 <= I < N); --csv/--json carry
                      sweep, shard and point columns for 'kernbench merge'
  --seeds N           (stress) jitter seeds 1..N (default ${DEFAULT_STRESS_SEEDS}); --threads takes a list (default ${DEFAULT_STRESS_LAYOUTS.join(',')})
  --timeout S         (stress) seconds one run may take before it is reported as timed out (default ${DEFAULT_STRESS_TIMEOUT_S})
  --tap               (stress) print TAP version 14 (one test point per run) instead of the report
  --set PATH=VALUE    override any topology field (system.sips.count=4) or CCL field (ccl.n_slots=1); repeatable
  --json              one JSON object per result on stdout
  --no-data           timing only: kernels move and compute no data (same crit_ns; results are not checked)
  --check-races       fail (exit 1) if two PEs or hosts touch the same bytes with nothing ordering them (docs/determinism.md)
  --csv FILE          write the table of a sweep bench (allreduce_perf, gemm_sweep, milestone_ccl) as CSV
  --out DIR           where a bench that writes files (milestone_ccl) puts them (default: ./out)
  --trace FILE        write a Chrome trace (open in ui.perfetto.dev): a track per PE, IPCQ flow arrows, host spans,
                      credit and receive waits, ring occupancy, barriers (docs/trace.md)
  --stats             (run) backpressure statistics per IPCQ ring and barrier, in virtual time (docs/backpressure.md);
                      --json carries them in each result as "stats"
  --log               (run) the event log: one line per IPCQ piece and kernel start/end, in virtual-time order
                      (stderr with --json)

Bench options:
  Each bench declares its own (--dtype, --min-bytes, ...): 'kernbench run --bench B --help' lists
  them with their defaults, and so does 'kernbench list'.

Environment:
  KERNBENCH_JITTER=SEED   inject seeded random yields/sleeps at every synchronisation point
                          (results must not change: the determinism contract)
`;

/** The flags kernbench itself takes; a bench's own flags come from its options schema (lib/bench/options.ts). */
const RUN_OPTIONS = {
  bench: { type: 'string' },
  topology: { type: 'string' },
  ccl: { type: 'string' },
  algorithm: { type: 'string' },
  threads: { type: 'string' },
  set: { type: 'string', multiple: true },
  over: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  trace: { type: 'string' },
  stats: { type: 'boolean' },
  log: { type: 'boolean' },
  csv: { type: 'string' },
  'no-data': { type: 'boolean' },
  shard: { type: 'string' },
  seeds: { type: 'string' },
  timeout: { type: 'string' },
  tap: { type: 'boolean' },
  'check-races': { type: 'boolean' },
  out: { type: 'string' },
  html: { type: 'string' },
  'trace-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type CommonFlag = keyof typeof RUN_OPTIONS;
type FlagTable = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;
type Values = Partial<Record<string, string | string[] | boolean>>;

const RUN_FLAGS: CommonFlag[] = ['bench', 'topology', 'ccl', 'algorithm', 'threads', 'set', 'json', 'trace', 'stats', 'log', 'csv', 'no-data', 'check-races', 'out', 'help'];
const SWEEP_FLAGS: CommonFlag[] = ['bench', 'over', 'topology', 'ccl', 'algorithm', 'threads', 'set', 'json', 'csv', 'no-data', 'check-races', 'shard', 'out', 'html', 'trace-dir', 'help'];
const STRESS_FLAGS: CommonFlag[] = ['bench', 'topology', 'ccl', 'algorithm', 'threads', 'set', 'no-data', 'check-races', 'seeds', 'timeout', 'tap', 'help'];

/**
 * Run one command line; returns its exit code, throws its error. `threads`: run
 * and sweep use these threads and leave them open (the in-process tests share one
 * set across their runs, as a sweep does across its points); without it each
 * command starts its own and closes them.
 */
export async function main(argv: string[], threads?: ThreadResources): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP);
    return command === undefined ? 2 : 0;
  }
  switch (command) {
    case 'run':
      return cmdRun(rest, threads);
    case 'list':
      return cmdList(rest);
    case 'sweep':
      return cmdSweep(rest, threads);
    case 'stress':
      return cmdStress(rest);
    case 'merge':
      return cmdMerge(rest);
    case 'validate':
      return cmdValidate(rest);
    case 'report':
      return cmdReport(rest);
    default:
      throw new UsageError(`unknown command; known: run, sweep, stress, merge, report, list, validate, --help, got '${command}'`);
  }
}

function parse(args: string[], allowed: CommonFlag[]): Values {
  return parseFlags(args, Object.fromEntries(allowed.map((k) => [k, RUN_OPTIONS[k]])) as FlagTable);
}

/** Parse `args` against `table` (strict: an unknown flag or a stray argument is a usage error naming the known flags). */
function parseFlags(args: string[], table: FlagTable): Values {
  try {
    return parseArgs({ args: joinDashValues(args, table), options: table, strict: true, allowPositionals: false }).values as Values;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const flags = Object.keys(table).map((k) => `--${k}`).join(', ');
    const quoted = /'([^']*)'/.exec(err.message)?.[1] ?? '';
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown flag; known flags: ${flags}, got '${quoted}'`);
    if (err.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new UsageError(`unexpected argument (flags are --name value); known flags: ${flags}, got '${quoted}'`);
    const first = err.message.split('\n')[0].replace(/\. (To specify|Did you).*$/s, '');
    throw new UsageError(`${first}; known flags: ${flags}`);
  }
}

/**
 * `--threads -1` as `--threads=-1`: a value that starts with a dash and a digit is
 * the flag's value (a negative number to refuse with the flag's own message), not a
 * flag; node's parser would otherwise call it ambiguous.
 */
function joinDashValues(args: string[], table: FlagTable): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const takesValue = a.startsWith('--') && !a.includes('=') && table[a.slice(2)]?.type === 'string';
    if (takesValue && i + 1 < args.length && /^-[\d.]/.test(args[i + 1])) {
      out.push(`${a}=${args[i + 1]}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** The value of --bench (and whether --help was given) before the bench's own flags are known. */
function prescan(args: string[]): { bench: string | undefined; help: boolean } {
  let bench: string | undefined;
  let help = false;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--bench') bench = args[++i];
    else if (args[i].startsWith('--bench=')) bench = args[i].slice('--bench='.length);
    else if (args[i] === '--help' || args[i] === '-h') help = true;
    else if (args[i] === '--') break;
  }
  return { bench, help };
}

interface BenchArgs {
  loaded: LoadedBench;
  values: Values;
  /** The bench's options as given on the command line, by field name. */
  options: Record<string, string | boolean>;
}

/**
 * Load the bench named by --bench and parse `args` against the common flags in
 * `common` plus the bench's own flags (from its options schema).
 */
async function parseBenchArgs(command: 'run' | 'sweep' | 'stress', args: string[], common: CommonFlag[]): Promise<BenchArgs | 'help'> {
  const { bench, help } = prescan(args);
  if (bench === undefined || bench === '') {
    if (help) return 'help';
    throw new UsageError(`${command} needs --bench NAME or --bench PATH; known: ${listBenches().join(', ')}, got none`);
  }
  const loaded = await loadBench(bench); // unknown bench or broken module: refused before any thread starts
  const infos = optionInfos(loaded.bench.options);
  const table: FlagTable = Object.fromEntries(common.map((k) => [k, RUN_OPTIONS[k]]));
  for (const o of infos) {
    if (o.flag in RUN_OPTIONS) {
      throw new KernbenchError('ERR_MODULE_CONTRACT', `${benchFile(loaded)}: option '${o.field}' would be the flag --${o.flag}, which is kernbench's own; rename it, got '${o.field}'`);
    }
    table[o.flag] = { type: o.kind === 'boolean' ? 'boolean' : 'string' };
  }
  const values = parseFlags(args, table);
  const options: Record<string, string | boolean> = {};
  for (const o of infos) {
    const v = values[o.flag];
    if (typeof v === 'string' || typeof v === 'boolean') options[o.field] = v;
  }
  return { loaded, values, options };
}

function benchFile(loaded: LoadedBench): string {
  return loaded.url.startsWith('file:') ? fileURLToPath(loaded.url) : loaded.url;
}

/** `kernbench run --bench B --help`: the bench's description and its options with their defaults. */
function benchHelp(command: 'run' | 'sweep' | 'stress', loaded: LoadedBench): string {
  const infos = optionInfos(loaded.bench.options);
  const lines = [
    `kernbench ${command} --bench ${loaded.name} [options] [bench options]`,
    `  ${loaded.bench.description}`,
    '',
    `Options of ${loaded.name}:`,
    ...(infos.length > 0 ? optionsHelp(infos) : ['  (none)']),
    '',
    `Common options (--topology, --threads, --set, ...): kernbench --help`,
  ];
  return `${lines.join('\n')}\n`;
}

/** The run configuration the flags describe (shared by run, sweep and stress; stress sets threads per run). */
function configFrom(v: Values, options: Record<string, unknown>, threadList = false): RunConfig {
  return {
    topology: (v.topology as string | undefined) ?? DEFAULT_TOPOLOGY,
    ccl: (v.ccl as string | undefined) ?? DEFAULT_CCL_FILE,
    threads: v.threads === undefined || threadList ? DEFAULT_THREADS : parseThreadLayout(v.threads as string),
    sets: (v.set as string[] | undefined) ?? [],
    algorithm: v.algorithm as string | undefined,
    jitterSeed: jitterSeedFromEnv(),
    trace: v.trace as string | undefined,
    options,
    noData: v['no-data'] === true,
    checkRaces: v['check-races'] === true,
    outDir: v.out as string | undefined,
  };
}

/**
 * Refuse an output file the run could not write, before the run: a missing
 * folder, a folder, a read-only place. Opening is the only honest test (access()
 * says yes to root on a read-only mount); a file created here is removed again.
 */
function checkWritable(flag: string, file: string): void {
  const path = resolve(file);
  const refuse = (why: string): never => {
    throw new UsageError(`--${flag}: cannot write ${path}: ${why}, got '${file}'`);
  };
  let existed = true;
  try {
    if (statSync(path).isDirectory()) refuse('it is a directory');
  } catch (e) {
    if (e instanceof UsageError) throw e;
    existed = false;
  }
  let fd: number;
  try {
    fd = openSync(path, existed ? 'r+' : 'wx');
  } catch (e) {
    return refuse(`${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  closeSync(fd);
  if (!existed) unlinkSync(path);
}

/** Check the bench's options and the output files before any thread starts. */
function preflight(b: BenchArgs, config: RunConfig): void {
  benchOptions(b.loaded, config);
  for (const flag of ['trace', 'csv'] as const) {
    const file = b.values[flag];
    if (typeof file === 'string') checkWritable(flag, file);
  }
}

/** Print the help `--help` asked for (kernbench's without a bench, the bench's with one) and return null; else the parsed arguments. */
function answeredHelp(command: 'run' | 'sweep' | 'stress', b: BenchArgs | 'help'): BenchArgs | null {
  if (b === 'help') {
    process.stdout.write(HELP);
    return null;
  }
  if (b.values.help === true) {
    process.stdout.write(benchHelp(command, b.loaded));
    return null;
  }
  return b;
}

async function cmdSweep(args: string[], threads: ThreadResources | undefined): Promise<number> {
  const b = answeredHelp('sweep', await parseBenchArgs('sweep', args, SWEEP_FLAGS));
  if (b === null) return 0;
  const v = b.values;
  const axes = ((v.over as string[] | undefined) ?? []).map(parseAxis);
  if (axes.length === 0) throw new UsageError('sweep needs at least one --over PATH=V1,V2,..., got none');
  const config = configFrom(v, b.options);
  const shard: Shard | undefined = typeof v.shard === 'string' ? parseShard(v.shard) : undefined;
  const gridSize = axes.reduce((n, a) => n * a.values.length, 1);
  if (shard && shard.count > gridSize) throw new UsageError(`--shard: ${shard.count} shards for a grid of ${gridSize} points would leave shards empty; use at most ${gridSize}, got '${v.shard as string}'`);
  preflight(b, config);
  const html = sweepHtmlTarget(v.html);
  const resources = threads ?? new ThreadResources();
  try {
    const tty = process.stderr.isTTY === true;
    const table = await runSweep(resources, b.loaded, config, axes, (line) => tty && process.stderr.write(`\r  ${line}   `), shard, traceDirOf(v['trace-dir']));
    if (tty) process.stderr.write('\n');
    // A shard's CSV and JSON carry the sweep's identity, the shard and each row's grid point (for merge).
    const out = shard ? shardTable(table, sweepId(b.loaded.name, benchOptions(b.loaded, config), config, axes), shard) : table;
    if (v.json === true) process.stdout.write(toJsonLines(out.columns, out.rows));
    else process.stdout.write(shard ? formatTable(['point', ...table.columns], table.rows.map((r, i) => [table.points[i], ...r])) : formatTable(table.columns, table.rows));
    if (typeof v.csv === 'string') writeFileSync(v.csv, toCsv(out.columns, out.rows.map((r) => r.map(String))));
    if (html !== undefined) await writeSweepHtml(html, { bench: b.loaded.name, config, axes, table, argv: args });
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
async function cmdMerge(args: string[]): Promise<number> {
  const table: FlagTable = { csv: RUN_OPTIONS.csv, json: RUN_OPTIONS.json, help: RUN_OPTIONS.help };
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: table, strict: true, allowPositionals: true }) as { values: Values; positionals: string[] };
  } catch (e) {
    const quoted = /'([^']*)'/.exec((e as Error).message)?.[1] ?? '';
    throw new UsageError(`merge takes FILE... [--csv F] [--json]; known flags: --csv, --json, --help, got '${quoted}'`);
  }
  const v = parsed.values;
  if (v.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  if (typeof v.csv === 'string') checkWritable('csv', v.csv);
  const merged = mergeShards(parsed.positionals);
  if (v.json === true && merged.format !== 'json') throw new UsageError(`merge --json needs the shards' --json files (CSV cells have no types), got CSV files`);
  process.stdout.write(v.json === true ? toJsonLines(merged.columns, merged.rows) : formatTable(merged.columns, merged.rows));
  if (typeof v.csv === 'string') writeFileSync(v.csv, toCsv(merged.columns, merged.rows.map((r) => r.map(String))));
  return rowsOk(merged.columns, merged.rows) ? 0 : 1;
}

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

async function cmdStress(args: string[]): Promise<number> {
  const b = answeredHelp('stress', await parseBenchArgs('stress', args, STRESS_FLAGS));
  if (b === null) return 0;
  const v = b.values;
  const layouts = typeof v.threads === 'string' ? parseLayouts(v.threads) : DEFAULT_STRESS_LAYOUTS;
  const seeds = typeof v.seeds === 'string' ? parseCount('seeds', v.seeds) : DEFAULT_STRESS_SEEDS;
  const timeoutS = typeof v.timeout === 'string' ? parseSeconds('timeout', v.timeout) : DEFAULT_STRESS_TIMEOUT_S;
  const config = configFrom(v, b.options, true);
  preflight(b, config);
  const benchArg = prescan(args).bench ?? b.loaded.name;
  const tty = process.stderr.isTTY === true;
  const report = await runStress(b.loaded, config, {
    seeds,
    layouts,
    timeoutMs: timeoutS * 1000,
    command: (p) => reproduceCommand(b, benchArg, p),
    progress: tty ? (done, total, label) => process.stderr.write(`\r\x1b[K  [${done + 1}/${total}] ${label}`) : undefined,
  });
  if (tty) process.stderr.write('\r\x1b[K');
  process.stdout.write(v.tap === true ? formatTap(b.loaded.name, report) : formatStress(b.loaded.name, report));
  return report.ok ? 0 : 1;
}

async function cmdRun(args: string[], threads: ThreadResources | undefined): Promise<number> {
  const b = answeredHelp('run', await parseBenchArgs('run', args, RUN_FLAGS));
  if (b === null) return 0;
  const v = b.values;
  const json = v.json === true;
  const out = json ? process.stderr : process.stdout;
  const config: RunConfig = {
    ...configFrom(v, b.options),
    // Statistics are recorded for --stats and carried in every --json result.
    stats: v.stats === true || json,
    ...(v.log === true ? { eventLog: (lines: string[]) => out.write(lines.map((l) => `${l}\n`).join('')) } : {}),
  };
  preflight(b, config);
  const resources = threads ?? new ThreadResources();
  try {
    const log = (line: string): void => {
      (json ? process.stderr : process.stdout).write(`${line}\n`);
    };
    const outcome = await runBench(resources, b.loaded, config, log);
    for (const r of outcome.results) printResult(json && outcome.stats ? { ...r, stats: outcome.stats } : r, json);
    if (!json && v.stats === true && outcome.stats) for (const line of statsTable(outcome.stats)) process.stdout.write(`${line}\n`);
    if (typeof v.csv === 'string') writeCsv(v.csv, b.loaded.name, outcome.results);
    // Results are the same either way; the note says where the wall time went (decision 0030).
    if (outcome.linkReplays > 0) process.stderr.write(`note: flows met on a shared link in ${outcome.linkReplays} session(s); each ran again with every piece through the link arbiter (docs/decisions/0030-optimistic-links.md)\n`);
    return outcome.results.every((r) => r.ok) ? 0 : 1;
  } finally {
    if (threads === undefined) await resources.close();
  }
}

/** The sweep tables of a run as one CSV (results of one bench share their columns). */
function writeCsv(file: string, bench: string, results: BenchResult[]): void {
  const tables = results.flatMap((r) => (r.table ? [r.table] : []));
  if (tables.length === 0) throw new UsageError(`--csv: bench '${bench}' produces no table; the sweep benches are allreduce_perf, gemm_sweep, milestone_ccl`);
  writeFileSync(file, toCsv(tables[0].columns, tables.flatMap((t) => t.rows)));
}

function printResult(r: BenchResult & { digest: string; stats?: RunStats }, json: boolean): void {
  if (json) {
    const { lines, outputs, extra, ...rest } = r;
    void outputs;
    process.stdout.write(`${JSON.stringify({ ...rest, ...(extra ?? {}), lines })}\n`);
    return;
  }
  for (const line of r.lines) process.stdout.write(`${line}\n`);
  const extra = r.extra ? Object.entries(r.extra).map(([k, x]) => `  ${k}: ${x}\n`).join('') : '';
  // A verbatim table (nccl-tests' layout) ends stdout; the summary goes beside it.
  (r.verbatim === true ? process.stderr : process.stdout).write(`${extra}  crit_ns: ${r.critNs.toFixed(3)}  (topology ${r.topology}, ws=${r.worldSize}, n_elem=${r.nElem}, ${r.dtype}, digest ${r.digest})\n`);
}

async function cmdList(args: string[]): Promise<number> {
  parse(args, []);
  process.stdout.write('benches:\n');
  for (const name of listBenches()) {
    const { bench } = await loadBench(name);
    process.stdout.write(`  ${name.padEnd(20)} ${bench.description}\n`);
    for (const line of optionsHelp(optionInfos(bench.options), ' '.repeat(25))) process.stdout.write(`${line}\n`);
  }
  process.stdout.write('topologies:\n');
  for (const t of listTopologies()) process.stdout.write(`  ${t}\n`);
  process.stdout.write('SIP topology kinds (lib/topology/kinds; system.sips.topology):\n');
  const kinds = sipKinds();
  const kindWidth = Math.max(...kinds.map((k) => k.name.length));
  for (const k of kinds) process.stdout.write(`  ${k.name.padEnd(kindWidth)}  ${k.summary}\n`);
  process.stdout.write('algorithms (lib/ccl/algorithms; a ccl.yaml module: names one, or a path to your own):\n');
  const catalog = await algorithmCatalog();
  const cells = catalog.map((a) => [a.name, a.meta.provides, a.meta.topologies.join('|'), a.meta.summary, paramsLine(a.meta)]);
  const width = (c: number): number => Math.max(...cells.map((r) => r[c].length));
  for (const r of cells) process.stdout.write(`  ${r[0].padEnd(width(0))}  ${r[1].padEnd(width(1))}  ${r[2].padEnd(width(2))}  ${r[3]}${r[4] ? `; ${r[4]}` : ''}\n`);
  const ccl = loadCclFile(DEFAULT_CCL_FILE);
  process.stdout.write('ccl.yaml entries (topologies/ccl.yaml; --algorithm NAME):\n');
  const entries = Object.entries(ccl.algorithms);
  const nameWidth = Math.max(...entries.map(([a]) => a.length));
  for (const [a, e] of entries) {
    const params = Object.entries(e.params ?? {}).map(([k, x]) => ` ${k}=${String(x)}`).join('');
    const ws = e.world_size === undefined ? '' : ` world_size=${e.world_size}`;
    process.stdout.write(`  ${a.padEnd(nameWidth)}  ${e.module} on ${e.topology}${params}${ws}${a === ccl.defaults.algorithm ? ' (default)' : ''}\n`);
  }
  return 0;
}

/** The checks `run` makes before any thread starts (lib/ccl/resolve.ts), and nothing else. */
async function cmdValidate(args: string[]): Promise<number> {
  const v = parse(args, ['topology', 'ccl', 'algorithm', 'set']);
  const sets = (v.set as string[] | undefined) ?? [];
  const name = (v.topology as string | undefined) ?? DEFAULT_TOPOLOGY;
  const t = loadTopology(topologyPath(name), sets);
  const c = await resolveRunCcl((v.ccl as string | undefined) ?? DEFAULT_CCL_FILE, { name, topology: t }, { algorithm: v.algorithm as string | undefined, sets });
  checkSessionMemory(t, c);
  const params = Object.entries(c.params).map(([k, x]) => `${k}=${String(x)}`);
  process.stdout.write(`ok: ${t.name} (${t.system.sips.count} SIPs, ${t.system.sips.topology}); algorithm ${c.algorithm} (${c.module}${params.length ? ` ${params.join(' ')}` : ''})\n`);
  return 0;
}

/** Errors of the invocation or its inputs (flags, configuration files, user modules): exit 2, one message, no stack. */
const EXIT_2: ReadonlySet<string> = new Set(['ERR_USAGE', 'ERR_CONFIG', 'ERR_MODULE_LOAD', 'ERR_MODULE_CONTRACT', 'ERR_OPTIONAL_DEPENDENCY', 'ERR_REPORT_INPUT']);

/**
 * A message as safe to print on a terminal: control characters (from a binary file
 * given as configuration, say) written as \xNN escapes; newlines and tabs kept.
 */
function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Entry point for bin/kernbench.js: exit codes and error printing (no stack for usage/config). */
export async function cli(argv: string[]): Promise<void> {
  // `kernbench list | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  process.exitCode = await runCli(argv);
}

/**
 * `kernbench ...argv` without the process around it: runs the command, prints an
 * error as the binary prints it, and returns the exit code instead of setting it
 * (the in-process entry the CLI tests use, with `threads` shared across their
 * runs; test/helpers/cli.ts).
 */
export async function runCli(argv: string[], threads?: ThreadResources): Promise<number> {
  let code: number;
  try {
    code = await main(argv, threads);
  } catch (e) {
    if (e instanceof KernbenchError && EXIT_2.has(e.code)) {
      process.stderr.write(`kernbench: ${printable(e.message)}\n`);
      code = 2;
    } else if (e instanceof KernbenchError) {
      process.stderr.write(`kernbench: ${e.name} [${e.code}]: ${printable(e.message)}\n`);
      code = 1;
    } else {
      process.stderr.write(`kernbench: ${printable(e instanceof Error ? (e.stack ?? e.message) : String(e))}\n`);
      code = 1;
    }
  }
  return code;
}

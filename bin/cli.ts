// Runs on: main. Owns: the kernbench command line — parsing, dispatch to
// run / list / validate, output formats and exit codes:
//   0 everything ran and every result is ok
//   1 a bench result is not ok, or the run failed (kernel error, deadlock, ...)
//   2 usage or configuration error (no stack trace)
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_CCL_FILE, DEFAULT_TOPOLOGY, listTopologies, topologyPath } from '../lib/config/paths.js';
import { loadCcl, loadCclFile, loadTopology } from '../lib/config/load.js';
import { isDType, DTYPES, type DType } from '../lib/dtype/index.js';
import { KernbenchError, UsageError } from '../lib/errors.js';
import type { BenchResult, RunConfig } from '../lib/bench/contract.js';
import { listBenches, loadBench } from '../lib/bench/registry.js';
import { runBench } from '../lib/bench/runner.js';
import { parseAxis, runSweep } from '../lib/bench/sweep.js';
import { DEFAULT_THREADS, parseThreadLayout } from '../lib/sync/plan.js';
import { jitterSeedFromEnv } from '../lib/sync/jitter.js';
import { ThreadResources } from '../lib/session/session.js';
import { REDUCE_OPS } from '../lib/ccl/reduce-op.js';

const HELP = `kernbench — a deterministic, multi-threaded simulator of a multi-chip AI accelerator

Usage:
  kernbench run --bench NAME [options]   run a bench and print its results
  kernbench sweep --bench NAME --over PATH=V1,V2,... [--over ...] [options]
                                         run a bench at every point of a grid of --set values; one table
  kernbench list                         list benches and topologies
  kernbench validate [--topology F] [--ccl F] [--set k=v ...]
                                         check configuration files and report every problem
  kernbench --help

Options for run:
  --bench NAME        bench to run (see 'kernbench list')
  --topology F        topology name in topologies/ or a path (default: ${DEFAULT_TOPOLOGY})
  --ccl F             CCL file (default: topologies/ccl.yaml)
  --algorithm NAME    algorithm entry of the CCL file (default: its defaults.algorithm)
  --threads L         rank (one executor per SIP, default) | pe (one per PE) | N (N executors; 1 is the reference)
  --dtype T           element type for benches that take one: ${DTYPES.join('|')}
  --over PATH=V1,V2   (sweep) an axis of the grid: a --set path and its values; repeatable
  --set PATH=VALUE    override any topology field (system.sips.count=4) or CCL field (ccl.n_slots=1); repeatable
  --json              one JSON object per result on stdout
  --min-bytes N, --max-bytes N, --step-factor F, --op OP
                      size sweep and reduction of allreduce_perf (nccl-tests style)
  --no-data           timing only: kernels move and compute no data (same crit_ns; results are not checked)
  --csv FILE          write the sweep table of a sweep bench (allreduce_perf, gemm_sweep, milestone_ccl) as CSV
  --trace FILE        write a Chrome trace (open in ui.perfetto.dev): a track per PE, IPCQ flow arrows, host spans

Environment:
  KERNBENCH_JITTER=SEED   inject seeded random yields/sleeps at every synchronisation point
                          (results must not change: the determinism contract)
`;

const RUN_OPTIONS = {
  bench: { type: 'string' },
  topology: { type: 'string' },
  ccl: { type: 'string' },
  algorithm: { type: 'string' },
  threads: { type: 'string' },
  dtype: { type: 'string' },
  set: { type: 'string', multiple: true },
  over: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  trace: { type: 'string' },
  csv: { type: 'string' },
  'no-data': { type: 'boolean' },
  'min-bytes': { type: 'string' },
  'max-bytes': { type: 'string' },
  'step-factor': { type: 'string' },
  op: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP);
    return command === undefined ? 2 : 0;
  }
  switch (command) {
    case 'run':
      return cmdRun(rest);
    case 'list':
      return cmdList(rest);
    case 'sweep':
      return cmdSweep(rest);
    case 'validate':
      return cmdValidate(rest);
    default:
      throw new UsageError(`unknown command; known: run, sweep, list, validate, --help, got '${command}'`);
  }
}

function parse(args: string[], allowed: (keyof typeof RUN_OPTIONS)[]) {
  const options = Object.fromEntries(allowed.map((k) => [k, RUN_OPTIONS[k]])) as Partial<typeof RUN_OPTIONS>;
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Partial<Record<keyof typeof RUN_OPTIONS, string | string[] | boolean>>;
  } catch (e) {
    const flags = allowed.map((k) => `--${k}`).join(', ');
    throw new UsageError(`${(e as Error).message.replace(/\. To specify.*$/s, '')}; known flags: ${flags}`);
  }
}

type Values = ReturnType<typeof parse>;

/** The run configuration the flags describe (shared by run and sweep). */
function configFrom(v: Values): RunConfig {
  const options: Record<string, string> = {};
  for (const k of ['min-bytes', 'max-bytes', 'step-factor', 'op'] as const) if (typeof v[k] === 'string') options[k] = v[k] as string;
  if (options.op !== undefined && !REDUCE_OPS.includes(options.op as (typeof REDUCE_OPS)[number])) throw new UsageError(`--op takes ${REDUCE_OPS.join('|')}, got '${options.op}'`);
  const dtype = v.dtype as string | undefined;
  if (dtype !== undefined && !isDType(dtype)) throw new UsageError(`--dtype takes ${DTYPES.join('|')}, got '${dtype}'`);
  return {
    topology: (v.topology as string | undefined) ?? DEFAULT_TOPOLOGY,
    ccl: (v.ccl as string | undefined) ?? DEFAULT_CCL_FILE,
    threads: v.threads === undefined ? DEFAULT_THREADS : parseThreadLayout(v.threads as string),
    sets: (v.set as string[] | undefined) ?? [],
    algorithm: v.algorithm as string | undefined,
    dtype: dtype as DType | undefined,
    jitterSeed: jitterSeedFromEnv(),
    trace: v.trace as string | undefined,
    options,
    noData: v['no-data'] === true,
  };
}

async function cmdSweep(args: string[]): Promise<number> {
  const v = parse(args, ['bench', 'over', 'topology', 'ccl', 'algorithm', 'threads', 'dtype', 'set', 'json', 'csv', 'no-data', 'min-bytes', 'max-bytes', 'step-factor', 'op']);
  const bench = v.bench as string | undefined;
  if (!bench) throw new UsageError(`sweep needs --bench NAME; known: ${listBenches().join(', ')}, got none`);
  const axes = ((v.over as string[] | undefined) ?? []).map(parseAxis);
  if (axes.length === 0) throw new UsageError('sweep needs at least one --over PATH=V1,V2,..., got none');
  const config = configFrom(v);
  await loadBench(bench);
  const resources = new ThreadResources();
  try {
    const tty = process.stderr.isTTY === true;
    const table = await runSweep(resources, bench, config, axes, (line) => tty && process.stderr.write(`\r  ${line}   `));
    if (tty) process.stderr.write('\n');
    if (v.json === true) for (const row of table.rows) process.stdout.write(`${JSON.stringify(Object.fromEntries(table.columns.map((c, i) => [c, row[i]])))}\n`);
    else {
      const cells = [table.columns, ...table.rows.map((r) => r.map(String))];
      const widths = table.columns.map((_, c) => Math.max(...cells.map((r) => String(r[c]).length)));
      for (const r of cells) process.stdout.write(`  ${r.map((x, c) => String(x).padStart(widths[c])).join('  ')}\n`);
    }
    if (typeof v.csv === 'string') writeCsv(v.csv, bench, [{ table: { columns: table.columns, rows: table.rows.map((r) => r.map(String)) } } as BenchResult]);
    return table.ok ? 0 : 1;
  } finally {
    await resources.close();
  }
}

async function cmdRun(args: string[]): Promise<number> {
  const v = parse(args, ['bench', 'topology', 'ccl', 'algorithm', 'threads', 'dtype', 'set', 'json', 'trace', 'csv', 'no-data', 'min-bytes', 'max-bytes', 'step-factor', 'op', 'help']);
  if (v.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const bench = v.bench as string | undefined;
  if (!bench) throw new UsageError(`run needs --bench NAME; known: ${listBenches().join(', ')}, got none`);
  const config = configFrom(v);
  const json = v.json === true;
  await loadBench(bench); // unknown bench: usage error before any thread starts
  const resources = new ThreadResources();
  try {
    const log = (line: string): void => {
      (json ? process.stderr : process.stdout).write(`${line}\n`);
    };
    const outcome = await runBench(resources, bench, config, log);
    for (const r of outcome.results) printResult(r, json);
    if (typeof v.csv === 'string') writeCsv(v.csv, bench, outcome.results);
    return outcome.results.every((r) => r.ok) ? 0 : 1;
  } finally {
    await resources.close();
  }
}

/** The sweep tables of a run as one CSV (results of one bench share their columns). */
function writeCsv(file: string, bench: string, results: BenchResult[]): void {
  const tables = results.flatMap((r) => (r.table ? [r.table] : []));
  if (tables.length === 0) throw new UsageError(`--csv: bench '${bench}' produces no table; the sweep benches are allreduce_perf, gemm_sweep, milestone_ccl`);
  const columns = tables[0].columns;
  const cell = (v: string | number): string => (/[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  const lines = [columns.map(cell).join(','), ...tables.flatMap((t) => t.rows.map((row) => row.map(cell).join(',')))];
  writeFileSync(file, `${lines.join('\n')}\n`);
}

function printResult(r: BenchResult & { digest: string }, json: boolean): void {
  if (json) {
    const { lines, outputs, extra, ...rest } = r;
    void outputs;
    process.stdout.write(`${JSON.stringify({ ...rest, ...(extra ?? {}), lines })}\n`);
    return;
  }
  for (const line of r.lines) process.stdout.write(`${line}\n`);
  const extra = r.extra ? Object.entries(r.extra).map(([k, x]) => `  ${k}: ${x}\n`).join('') : '';
  process.stdout.write(`${extra}  crit_ns: ${r.critNs.toFixed(3)}  (topology ${r.topology}, ws=${r.worldSize}, n_elem=${r.nElem}, ${r.dtype}, digest ${r.digest})\n`);
}

async function cmdList(args: string[]): Promise<number> {
  parse(args, []);
  process.stdout.write('benches:\n');
  for (const b of listBenches()) process.stdout.write(`  ${b.padEnd(20)} ${(await loadBench(b)).description}\n`);
  process.stdout.write('topologies:\n');
  for (const t of listTopologies()) process.stdout.write(`  ${t}\n`);
  const ccl = loadCclFile(DEFAULT_CCL_FILE);
  process.stdout.write(`algorithms (topologies/ccl.yaml):\n`);
  for (const a of Object.keys(ccl.algorithms)) process.stdout.write(`  ${a}${a === ccl.defaults.algorithm ? ' (default)' : ''}\n`);
  return 0;
}

async function cmdValidate(args: string[]): Promise<number> {
  const v = parse(args, ['topology', 'ccl', 'algorithm', 'set']);
  const sets = (v.set as string[] | undefined) ?? [];
  const topo = topologyPath((v.topology as string | undefined) ?? DEFAULT_TOPOLOGY);
  const t = loadTopology(topo, sets);
  const c = loadCcl((v.ccl as string | undefined) ?? DEFAULT_CCL_FILE, { algorithm: v.algorithm as string | undefined, sets, topology: t });
  process.stdout.write(`ok: ${t.name} (${t.system.sips.count} SIPs, ${t.system.sips.topology}); algorithm ${c.algorithm} (${c.module})\n`);
  return 0;
}

/** Entry point for bin/kernbench.js: exit codes and error printing (no stack for usage/config). */
export async function cli(argv: string[]): Promise<void> {
  // `kernbench list | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  let code: number;
  try {
    code = await main(argv);
  } catch (e) {
    if (e instanceof KernbenchError && (e.code === 'ERR_USAGE' || e.code === 'ERR_CONFIG')) {
      process.stderr.write(`kernbench: ${e.message}\n`);
      code = 2;
    } else if (e instanceof KernbenchError) {
      process.stderr.write(`kernbench: ${e.name} [${e.code}]: ${e.message}\n`);
      code = 1;
    } else {
      process.stderr.write(`kernbench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      code = 1;
    }
  }
  process.exitCode = code;
}

// Runs on: main. Owns: the one declaration of kernbench's command line — every
// command, every flag of kernbench's own and which commands take it. Parsing
// (./parse.ts), the allow-list of each command, `--help` for kernbench and for
// each command (./help.ts) and `--version` are all derived from these two
// tables; a bench's own flags come from its options schema (lib/bench/options.ts).
//
// A new flag is one entry in FLAGS and its name in the commands that take it.
import { DEFAULT_TOPOLOGY } from '../../lib/config/paths.js';
import { DEFAULT_STRESS_LAYOUTS, DEFAULT_STRESS_SEEDS, DEFAULT_STRESS_TIMEOUT_S } from '../../lib/bench/stress.js';

export interface FlagSpec {
  /** A switch (boolean) or a flag that takes a value (string). */
  type: 'string' | 'boolean';
  /** May be given more than once (its values are collected in order). */
  multiple?: boolean;
  /** A one-letter alias (`-h`). */
  short?: string;
  /** How help writes the value (`F`, `N`, `PATH=VALUE`); absent for a switch. */
  value?: string;
  /** One line (or a few) for help, its default included. */
  help: string;
}

/** kernbench's own flags, in the order help lists them. */
export const FLAGS = {
  bench: { type: 'string', value: 'B', help: "a shipped bench's name (see 'kernbench list'), or the path of a bench module\n(.ts, .mts, .js, .mjs; absolute or relative to the current directory)" },
  over: { type: 'string', multiple: true, value: 'PATH=V1,V2', help: 'an axis of the grid: a --set path and its values; repeatable' },
  topology: { type: 'string', value: 'F', help: `topology name in topologies/ ('kernbench list') or a path (default: ${DEFAULT_TOPOLOGY})` },
  ccl: { type: 'string', value: 'F', help: 'CCL file (default: topologies/ccl.yaml)' },
  algorithm: { type: 'string', value: 'NAME', help: 'algorithm entry of the CCL file (default: its defaults.algorithm)' },
  threads: { type: 'string', value: 'L', help: 'rank (one executor per SIP, default) | pe (one per PE) | N (N executors; 1 is the reference)' },
  set: { type: 'string', multiple: true, value: 'PATH=VALUE', help: 'override any topology field (system.sips.count=4) or CCL field (ccl.n_slots=1); repeatable' },
  shard: { type: 'string', value: 'I/N', help: 'run only shard I of N (1 <= I <= N): grid point k (from 0) when k mod N = I - 1;\n--csv/--json carry sweep, shard and point columns for \'kernbench merge\'' },
  seeds: { type: 'string', value: 'N', help: `jitter seeds 1..N (default ${DEFAULT_STRESS_SEEDS})` },
  timeout: { type: 'string', value: 'S', help: 'seconds the run may take; past them it stops (exit 1) with what every actor was doing:\nrunning (which kernel, on which PE, at what virtual time) or waiting (on what); default: none' },
  'max-virtual-time': { type: 'string', value: 'NS', help: "stop the run (exit 1, with the same report) once a PE's virtual clock passes NS nanoseconds;\ndefault: none" },
  tap: { type: 'boolean', help: 'print TAP version 13 (one test point per run) instead of the report' },
  json: { type: 'boolean', help: 'one JSON object per result on stdout (shape: schemas/run-result.schema.json)' },
  csv: { type: 'string', value: 'FILE', help: 'write the bench\'s table as CSV (benches that declare one: allreduce_perf, gemm_sweep, milestone_ccl)' },
  trace: { type: 'string', value: 'FILE', help: 'write a Chrome trace (open in ui.perfetto.dev): a track per PE, IPCQ flow arrows, host spans,\ncredit and receive waits, ring occupancy, barriers (docs/trace.md)' },
  stats: { type: 'boolean', help: 'backpressure statistics per IPCQ ring and barrier, in virtual time (docs/backpressure.md);\n--json carries them in each result as "stats"' },
  log: { type: 'boolean', help: 'the event log: one line per IPCQ piece and kernel start/end, in virtual-time order\n(stderr with --json)' },
  'no-data': { type: 'boolean', help: 'timing only: kernels move and compute no data (same crit_ns; results are not checked)' },
  'check-races': { type: 'boolean', help: 'fail (exit 1) if two PEs or hosts touch the same bytes with nothing ordering them (docs/determinism.md)' },
  out: { type: 'string', value: 'DIR', help: 'where a bench that writes files (milestone_ccl) puts them (default: ./out)' },
  html: { type: 'string', value: 'FILE', help: 'also write one self-contained HTML page: table, charts, topologies, parameters, version' },
  plot: { type: 'string', value: 'FILE', help: "also draw where the time goes: a stacked bar per row, a column per grid point, a segment per\ntime_* column (transformer_layer's breakdown; crit_ns alone otherwise); SVG, needs vega and vega-lite" },
  'trace-dir': { type: 'string', value: 'DIR', help: "with --html: a Chrome trace per point in DIR, linked from the page (open in ui.perfetto.dev)" },
  verbose: { type: 'boolean', help: 'on a deadlock, every waiter\'s own line after the summary (stderr)' },
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies Record<string, FlagSpec>;

export type FlagName = keyof typeof FLAGS;

export interface CommandSpec {
  /** One line for kernbench's help. */
  summary: string;
  /** The synopsis lines, each after `kernbench <command> `. */
  usage: string[];
  /** The flags it takes, in help order. */
  flags: readonly FlagName[];
  /** What a flag means for this command, where it differs from FLAGS' help. */
  notes?: Partial<Record<FlagName, string>>;
  /** It takes arguments that are not flags (merge's files). */
  positionals?: boolean;
  /** It loads --bench and takes that bench's own flags too. */
  benchOptions?: boolean;
  /** Paragraphs after the options. */
  more?: string[];
}

const BENCH_OPTIONS_NOTE = "Bench options: each bench declares its own (--dtype, --min-bytes, ...); 'kernbench COMMAND --bench B --help'\nlists them with their defaults, and so does 'kernbench list'.";
const JITTER_NOTE = 'Environment: KERNBENCH_JITTER=SEED injects seeded random yields/sleeps at every synchronisation point\n(results must not change: the determinism contract).';

const BENCH_HELP = "this help; with --bench B, the bench's own options and their defaults";

const RUN_CONFIG: readonly FlagName[] = ['bench', 'topology', 'ccl', 'algorithm', 'threads', 'set'];

/** kernbench's commands, in the order help lists them. */
export const COMMANDS = {
  run: {
    summary: 'run a bench and print its results',
    usage: ['--bench B [options] [bench options]', "--bench B --help          the bench's own options, with their defaults"],
    flags: [...RUN_CONFIG, 'json', 'csv', 'trace', 'stats', 'log', 'no-data', 'check-races', 'out', 'timeout', 'max-virtual-time', 'verbose', 'help'],
    notes: { help: BENCH_HELP, verbose: "on a deadlock or a stopped run, every actor's own line after the summary (stderr)" },
    benchOptions: true,
    more: [BENCH_OPTIONS_NOTE, JITTER_NOTE, 'On a terminal, a run that takes a while shows its progress on stderr (virtual time, messages, ranks done).', 'Ctrl-C (SIGINT) stops a run as --timeout does: the same report, exit 1 (docs/determinism.md, "Runs end").'],
  },
  sweep: {
    summary: 'run a bench at every point of a grid of --set values; one table',
    usage: ['--bench B --over PATH=V1,V2,... [--over ...] [options] [bench options]', '... --shard I/N --csv F    run shard I of N (counted from 1) of the grid'],
    flags: ['bench', 'over', 'topology', 'ccl', 'algorithm', 'threads', 'set', 'shard', 'json', 'csv', 'no-data', 'check-races', 'out', 'html', 'plot', 'trace-dir', 'help'],
    notes: { json: 'one JSON object per row on stdout', csv: "write the sweep's table as CSV", help: BENCH_HELP },
    benchOptions: true,
    more: [BENCH_OPTIONS_NOTE, JITTER_NOTE],
  },
  stress: {
    summary: 'run every jitter seed under every layout; exit 1 on any difference from --threads 1 without jitter',
    usage: ['--bench B [--seeds N] [--threads 1,rank,pe,2] [--timeout S] [--tap] [options] [bench options]'],
    flags: [...RUN_CONFIG, 'seeds', 'timeout', 'tap', 'no-data', 'check-races', 'help'],
    notes: { threads: `the layouts to compare, a comma-separated list (default ${DEFAULT_STRESS_LAYOUTS.join(',')})`, timeout: `seconds each run may take before it is reported as timed out (default ${DEFAULT_STRESS_TIMEOUT_S})`, help: BENCH_HELP },
    benchOptions: true,
    more: [BENCH_OPTIONS_NOTE, 'Each run differing, deadlocking, failing or timing out is reported with the command that repeats it (docs/stress.md).'],
  },
  merge: {
    summary: "join the shards' CSV (or JSON) files into the unsharded sweep's table",
    usage: ['FILE... [--csv F] [--json]'],
    flags: ['csv', 'json', 'help'],
    notes: { csv: 'write the merged table as CSV', json: "one JSON object per row (needs the shards' --json files: CSV cells have no types)" },
    positionals: true,
  },
  report: {
    summary: "one self-contained HTML page (default report.html) from saved 'sweep --json' or 'run --json' results",
    usage: ['FILE.json... [--html FILE]'],
    flags: ['html', 'help'],
    notes: { html: 'the page to write (default: report.html in the current folder)' },
    positionals: true,
  },
  list: {
    summary: 'list benches (with their options), topologies, topology kinds and algorithms',
    usage: [''],
    flags: ['help'],
  },
  validate: {
    summary: 'check configuration files and report every problem, as run does before it starts',
    usage: ['[--bench NAME|PATH] [--topology F] [--ccl F] [--algorithm NAME] [--set PATH=VALUE ...]'],
    flags: ['bench', 'topology', 'ccl', 'algorithm', 'set', 'help'],
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

export function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** The commands that load a bench and take its flags. */
export type BenchCommand = { [C in CommandName]: (typeof COMMANDS)[C] extends { benchOptions: true } ? C : never }[CommandName];

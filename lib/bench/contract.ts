// Runs on: main. Owns: what a bench is given (RunConfig, BenchContext) and what
// it returns (BenchResult). What a bench module exports is lib/bench/define.ts:
// a default export made with defineBench, with either
//   run(torch, ctx)     one session: the bench drives torch like a PyTorch
//                       script (spawn -> initProcessGroup -> allReduce), or
//   evaluate(ctx)       an evaluation bench that opens its own sessions (sweeps,
//                       layout comparisons) through ctx.session(...).
import { resolve } from 'node:path';
import type { ResolvedCcl } from '../config/ccl-schema.js';
import type { DType } from '../dtype/index.js';
import type { Torch } from '../host/torch.js';
import type { ThreadLayout } from '../config/plan.js';
import type { Session, SessionReport } from '../session/session.js';
import type { RunStats } from '../trace/stats.js';
import type { RunProgress } from './progress.js';

export interface BenchResult {
  bench: string;
  algorithm: string;
  topology: string;
  worldSize: number;
  nElem: number;
  dtype: string;
  ok: boolean;
  /** Max over participating PEs of the kernel's virtual execution time, in ns. */
  critNs: number;
  /** Human-readable lines (what a PyTorch script would print on rank 0). */
  lines: string[];
  /** Output tensors hashed into the digest (in a fixed order, e.g. by rank). */
  outputs?: (Float32Array | Float64Array)[];
  /** A sweep's table, written by --csv FILE (and kept in --json). */
  table?: { columns: string[]; rows: (string | number)[][] };
  /** Bench-specific figures (throughput, ratios), printed and kept in --json. */
  extra?: Record<string, number | string | boolean>;
  /**
   * Figures `kernbench sweep` carries as columns after its fixed ones, in this
   * order (lib/bench/sweep.ts). Columns named `time_*` are the parts of critNs
   * (they sum to it) that the sweep's plot of where the time goes stacks.
   */
  sweepColumns?: Record<string, number>;
  /**
   * `lines` are the bench's whole text output, in a layout other tools parse
   * (nccl-tests' tables): the CLI prints nothing after them on stdout, and its
   * summary of the result (crit_ns, digest, extras) goes to stderr.
   */
  verbatim?: boolean;
}

export interface RunConfig {
  topology: string;
  ccl: string;
  threads: ThreadLayout;
  sets: string[];
  algorithm: string | undefined;
  /**
   * Shorthand for `options.dtype`, for benches whose schema declares a dtype option
   * (programmatic callers; the CLI's --dtype is that option's flag).
   */
  dtype?: DType | undefined;
  jitterSeed: number | null;
  /**
   * The folder a bench writes its files into (--out; relative to the current
   * folder). Default: `out` in the current folder (outputDir), never the package's own.
   */
  outDir?: string;
  /** Write a Chrome trace of the (last) session here (--trace). */
  trace?: string;
  /**
   * Backpressure statistics (--stats, --json): record every session's IPCQ pieces,
   * waits and barriers and return their statistics (RunOutcome.stats,
   * docs/backpressure.md). Recording changes no result, digest or crit_ns.
   */
  stats?: boolean;
  /**
   * The event log (--log, lib/trace/event-log.ts): called with each session's
   * lines when it ends, a failed one too (before its error is thrown).
   */
  eventLog?: (lines: string[]) => void;
  /**
   * Called every progressIntervalMs() (lib/bench/progress.ts) while a session
   * runs, with how far it has got: the CLI's progress line on a terminal.
   * Reading it changes no result.
   */
  progress?: (p: RunProgress) => void;
  /** Timing-only mode (--no-data): same virtual times, no data moved or computed; benches skip their checks. */
  noData?: boolean;
  /**
   * The virtual-time limit (--max-virtual-time, in ps; none when absent): a PE whose clock
   * passes it stops the run with ERR_VIRTUAL_TIME_LIMIT and a report of every actor
   * (docs/decisions/0095-a-stuck-run-is-reported.md).
   */
  maxVirtualTimePs?: number;
  /** Check for data races (--check-races): the session fails with ERR_DATA_RACE at its end if two actors touched the same bytes unordered. */
  checkRaces?: boolean;
  /**
   * The bench's options by field name (`minBytes`) or flag name (`min-bytes`), as
   * given: text from the command line or typed values. They are checked against the
   * bench's schema (lib/bench/options.ts) when it runs; unknown names are refused.
   */
  options?: Record<string, unknown>;
}

/** Where a bench that writes files puts them: `<--out or ./out>/<sub>`, resolved against the current folder. */
export function outputDir(config: Pick<RunConfig, 'outDir'>, sub: string): string {
  return resolve(config.outDir ?? 'out', sub);
}

export interface SessionRun<T> {
  value: T;
  report: SessionReport;
  digest: string;
  /** The session's backpressure statistics (every epoch), when config.stats. */
  stats?: RunStats;
}

export interface BenchContext<O = Record<string, unknown>> {
  /** The bench's name (a shipped bench) or its file's base name (a user's bench). */
  bench: string;
  /** The bench's options: its schema's output, defaults applied. */
  options: O;
  config: RunConfig;
  ccl: ResolvedCcl;
  /** Progress and notes (stderr in --json mode, stdout otherwise). */
  log(line: string): void;
  /** Open a session with `overrides` on top of the run's configuration, run `fn`, end it. */
  session<T>(overrides: Partial<RunConfig>, fn: (torch: Torch, session: Session) => Promise<T>): Promise<SessionRun<T>>;
}

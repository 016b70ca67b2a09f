// Runs on: main. Owns: what a bench module exports and what it returns.
//
// A bench is a module in benches/ exporting `description` and either
//   run(torch, ctx)     one session: the bench drives torch like a PyTorch
//                       script (spawn -> initProcessGroup -> allReduce), or
//   evaluate(ctx)       an evaluation bench that opens its own sessions (sweeps,
//                       layout comparisons) through ctx.session(...).
import type { ResolvedCcl } from '../config/ccl-schema.js';
import type { DType } from '../dtype/index.js';
import type { Torch } from '../host/torch.js';
import type { ThreadLayout } from '../sync/plan.js';
import type { Session, SessionReport } from '../session/session.js';

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
}

export interface RunConfig {
  topology: string;
  ccl: string;
  threads: ThreadLayout;
  sets: string[];
  algorithm: string | undefined;
  dtype: DType | undefined;
  jitterSeed: number | null;
  /** Write a Chrome trace of the (last) session here (--trace). */
  trace?: string;
  /** Timing-only mode (--no-data): same virtual times, no data moved or computed; benches skip their checks. */
  noData?: boolean;
  /** Bench-specific flags (--min-bytes, --max-bytes, --step-factor, --op), as given. */
  options?: Record<string, string>;
}

export interface SessionRun<T> {
  value: T;
  report: SessionReport;
  digest: string;
}

export interface BenchContext {
  bench: string;
  config: RunConfig;
  ccl: ResolvedCcl;
  /** Progress and notes (stderr in --json mode, stdout otherwise). */
  log(line: string): void;
  /** Open a session with `overrides` on top of the run's configuration, run `fn`, end it. */
  session<T>(overrides: Partial<RunConfig>, fn: (torch: Torch, session: Session) => Promise<T>): Promise<SessionRun<T>>;
}

export interface BenchModule {
  description: string;
  run?: (torch: Torch, ctx: BenchContext) => Promise<BenchResult[]>;
  evaluate?: (ctx: BenchContext) => Promise<BenchResult[]>;
}

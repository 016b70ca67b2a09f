// Runs on: any thread (main loads benches; executors import a bench's module
// to find its spawned workers). Owns: what a bench is — `defineBench` and the
// test that a module's default export is one.
//
// A bench module's DEFAULT export is the value defineBench returns; the
// functions it spawns are NAMED exports of the same module (spawn finds them
// there, decision 0001). Its options are one zod object schema: the CLI's
// flags, `--help` and `kernbench list` are derived from it (lib/bench/options.ts),
// and `ctx.options` is the schema's output, defaults applied.
//
// A shipped bench gives its options as a function of zod, `options: (z) =>
// z.object({...})`, built here on the main thread only (./zod-on-main.ts): an
// executor imports the bench's module for its spawned workers and never reads its
// options, so it loads no zod (decision 0228). A user's bench may give either.
import type { z } from 'zod';
import { KernbenchError } from '../errors.js';
import { zodOnMain } from '../zod-on-main.js';
import type { Torch } from '../host/torch.js';
import type { ArrangementKind, Provides } from '../ccl/define-algorithm.js';
import type { BenchContext, BenchResult } from './contract.js';

/** The zod namespace a bench's options function is given. */
export type Zod = typeof z;

/**
 * Marks a value made by defineBench. A registered symbol, not a class: a user's
 * bench may import a different copy of kernbench than the CLI that loads it.
 */
const BENCH = Symbol.for('kernbench.bench');

/** An option field's name: camelCase, so that its flag is the kebab-case form (`minBytes` -> `--min-bytes`). */
const OPTION_NAME = /^[a-z][a-zA-Z0-9]*$/;

/** A bench's options schema: an object of named fields. */
export type BenchOptionsSchema = z.ZodObject;

/** What `ctx.options` holds for a bench whose `options` are `O` (a schema, or a function of zod that builds one). */
export type OptionsOf<O> = O extends (zod: Zod) => infer S ? (S extends BenchOptionsSchema ? z.output<S> : never) : O extends BenchOptionsSchema ? z.output<O> : never;

/**
 * Marks an integer option as a byte count, written on the command line as
 * nccl-tests' -b/-e take it: `z.number().int().meta(BYTE_SIZE)`; `--max-bytes 1M`.
 */
export const BYTE_SIZE = { byteSize: true } as const;

/**
 * A bench option's schema for integers written `8,64,256` on the command line
 * (`--sizes 8,64`), each at least `min`, built with `zod` (a shipped bench's
 * options function; lib/bench/options.ts intList is the same with zod's own).
 * Give it a default written the same way with `.prefault('8,64,256')` (help
 * shows it as written), or `.optional()`.
 */
export function intList(zod: Zod, min: number) {
  return zod
    .string()
    .regex(/^[0-9]+(,[0-9]+)*$/, 'takes integers separated by commas')
    .transform((text) => text.split(',').map(Number))
    .pipe(zod.array(zod.number().int().min(min, `each must be at least ${min}`)));
}

export interface BenchSpec<S extends BenchOptionsSchema> {
  /** One line for `kernbench list`. */
  description: string;
  /**
   * The bench's options; each field is a flag of `kernbench run` (camelCase field,
   * kebab-case flag). A schema, or a function that builds it from zod (called once,
   * on the main thread: shipped benches, so that their executors load no zod).
   */
  options?: S | ((zod: Zod) => S);
  /**
   * Its results carry a table (`BenchResult.table`, a sweep over sizes or shapes)
   * that `--csv FILE` writes. Declared, so that `--csv` on a bench without one is
   * refused before the run, not after it. Default false.
   */
  table?: boolean;
  /**
   * What the run's ccl.yaml algorithm must be, for a bench that runs it: what its
   * module provides (an all-reduce bench cannot run a point-to-point smoke test),
   * the arrangement it needs, and the entry used when --algorithm is not given
   * (else the CCL file's default). Checked before any thread starts, by run and by
   * `validate --bench` (lib/bench/runner.ts benchAlgorithm). Default: no requirement.
   */
  algorithm?: BenchAlgorithm;
  /** One session: the bench drives torch like a PyTorch script (spawn -> initProcessGroup -> allReduce). */
  run?: (torch: Torch, ctx: BenchContext<z.output<S>>) => Promise<BenchResult[]>;
  /** An evaluation that opens its own sessions (sweeps, layout comparisons) through ctx.session(...). */
  evaluate?: (ctx: BenchContext<z.output<S>>) => Promise<BenchResult[]>;
}

/** BenchSpec.algorithm: what the run's algorithm must be. */
export interface BenchAlgorithm {
  readonly provides: Provides;
  readonly arrangement?: ArrangementKind;
  /** The ccl.yaml entry run when --algorithm is not given. */
  readonly default?: string;
}

export interface Bench<S extends BenchOptionsSchema = BenchOptionsSchema> {
  readonly [BENCH]: true;
  readonly algorithm: BenchAlgorithm | undefined;
  readonly description: string;
  readonly options: S;
  /** Its results carry a table for --csv (BenchSpec.table). */
  readonly table: boolean;
  readonly run?: (torch: Torch, ctx: BenchContext<z.output<S>>) => Promise<BenchResult[]>;
  readonly evaluate?: (ctx: BenchContext<z.output<S>>) => Promise<BenchResult[]>;
}

/** Declare a bench: `export default defineBench({ description, options: z.object({...}), run })`. */
export function defineBench<S extends BenchOptionsSchema = z.ZodObject<Record<never, never>>>(spec: BenchSpec<S>): Bench<S> {
  const bad = (what: string, got: unknown): never => {
    throw new KernbenchError('ERR_MODULE_DEFINITION', `defineBench: ${what}, got ${got}`);
  };
  if (typeof spec?.description !== 'string' || spec.description === '') bad('description must be a non-empty string', JSON.stringify(spec?.description));
  const hasRun = typeof spec.run === 'function';
  const hasEvaluate = typeof spec.evaluate === 'function';
  if (hasRun === hasEvaluate) bad('a bench has exactly one of run(torch, ctx) and evaluate(ctx)', hasRun ? 'both' : 'neither');
  // A function of zod, or no options at all, is built on main only; on another thread nothing reads them.
  const given = spec.options;
  const zod = zodOnMain;
  let options: S | undefined;
  if (typeof given === 'function') options = zod === undefined ? undefined : given(zod);
  else options = given ?? (zod?.object({}) as S | undefined);
  if (options !== undefined) {
    if (!isObjectSchema(options)) bad('options must be a zod object schema (z.object({...}))', typeof options);
    for (const key of Object.keys(options.shape)) if (!OPTION_NAME.test(key)) bad('option names are camelCase identifiers (minBytes is the flag --min-bytes)', `'${key}'`);
  }
  if (spec.table !== undefined && typeof spec.table !== 'boolean') bad('table must be true or false (its results carry a table for --csv)', typeof spec.table);
  const algorithm = spec.algorithm === undefined ? undefined : Object.freeze({ ...spec.algorithm });
  return Object.freeze({
    [BENCH]: true as const,
    description: spec.description,
    algorithm,
    get options(): S {
      if (options === undefined) throw new KernbenchError('ERR_MAIN_THREAD_ONLY', `a bench's options are built on the main thread only (they are checked there before any rank starts), got a read on a worker thread`);
      return options;
    },
    table: spec.table === true,
    run: spec.run,
    evaluate: spec.evaluate,
  });
}

/** Is `x` a bench made with defineBench (by this or another copy of kernbench)? */
export function isBench(x: unknown): x is Bench {
  return typeof x === 'object' && x !== null && (x as { [BENCH]?: unknown })[BENCH] === true;
}

/** A zod object schema (duck-typed: a user's schema may come from another copy of zod 4). */
function isObjectSchema(x: unknown): x is BenchOptionsSchema {
  const s = x as { shape?: unknown; safeParse?: unknown } | null;
  return typeof s === 'object' && s !== null && typeof s.shape === 'object' && s.shape !== null && typeof s.safeParse === 'function';
}

// Runs on: any thread (main loads benches; executors import a bench's module
// to find its spawned workers). Owns: what a bench is — `defineBench` and the
// test that a module's default export is one.
//
// A bench module's DEFAULT export is the value defineBench returns; the
// functions it spawns are NAMED exports of the same module (spawn finds them
// there, decision 0001). Its options are one zod object schema: the CLI's
// flags, `--help` and `kernbench list` are derived from it (lib/bench/options.ts),
// and `ctx.options` is the schema's output, defaults applied.
import { z } from 'zod';
import { KernbenchError } from '../errors.js';
import type { Torch } from '../host/torch.js';
import type { ArrangementKind, Provides } from '../ccl/define-algorithm.js';
import type { BenchContext, BenchResult } from './contract.js';

export { z };

/**
 * Marks a value made by defineBench. A registered symbol, not a class: a user's
 * bench may import a different copy of kernbench than the CLI that loads it.
 */
const BENCH = Symbol.for('kernbench.bench');

/** An option field's name: camelCase, so that its flag is the kebab-case form (`minBytes` -> `--min-bytes`). */
const OPTION_NAME = /^[a-z][a-zA-Z0-9]*$/;

/** A bench's options schema: an object of named fields. */
export type BenchOptionsSchema = z.ZodObject;

export interface BenchSpec<S extends BenchOptionsSchema> {
  /** One line for `kernbench list`. */
  description: string;
  /** The bench's options; each field is a flag of `kernbench run` (camelCase field, kebab-case flag). */
  options?: S;
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
  const options = spec.options ?? (z.object({}) as unknown as S);
  if (!isObjectSchema(options)) bad('options must be a zod object schema (z.object({...}))', typeof options);
  for (const key of Object.keys(options.shape)) if (!OPTION_NAME.test(key)) bad('option names are camelCase identifiers (minBytes is the flag --min-bytes)', `'${key}'`);
  if (spec.table !== undefined && typeof spec.table !== 'boolean') bad('table must be true or false (its results carry a table for --csv)', typeof spec.table);
  const algorithm = spec.algorithm === undefined ? undefined : Object.freeze({ ...spec.algorithm });
  return Object.freeze({ [BENCH]: true as const, description: spec.description, algorithm, options, table: spec.table === true, run: spec.run, evaluate: spec.evaluate });
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

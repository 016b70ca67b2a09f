// Runs on: main. Owns: what the parsed flags mean before anything runs — the run
// configuration they describe, and the checks made before any thread starts
// (the bench's options, output files that could not be written, --csv on a
// bench without a table), so that a mistake costs no run.
import { closeSync, openSync, statSync, unlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_CCL_FILE, DEFAULT_TOPOLOGY } from '../../lib/config/paths.js';
import { KernbenchError } from '../../lib/errors.js';
import type { RunConfig } from '../../lib/bench/contract.js';
import { benchOptions } from '../../lib/bench/runner.js';
import { jitterSeedFromEnv } from '../../lib/sync/jitter.js';
import { DEFAULT_THREADS, parseThreadLayout } from '../../lib/config/plan.js';
import type { BenchArgs, Values } from './parse.js';

/** The run configuration the flags describe (shared by run, sweep and stress; stress sets threads per run). */
export function configFrom(v: Values, options: Record<string, unknown>, threadList = false): RunConfig {
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
export function checkWritable(flag: string, file: string): void {
  const path = resolve(file);
  const refuse = (why: string): never => {
    throw new KernbenchError('ERR_UNWRITABLE_OUTPUT', `--${flag}: cannot write ${path}: ${why}, got '${file}'`);
  };
  let existed = true;
  try {
    if (statSync(path).isDirectory()) refuse('it is a directory');
  } catch (e) {
    if (e instanceof KernbenchError) throw e;
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

/**
 * Check the bench's options and the output files before any thread starts.
 * `tableFromBench`: --csv writes the bench's own table (run), which it must declare;
 * a sweep's --csv writes the sweep's table, which every bench has.
 */
export function preflight(b: BenchArgs, config: RunConfig, tableFromBench: boolean): void {
  benchOptions(b.loaded, config);
  if (tableFromBench && typeof b.values.csv === 'string' && !b.loaded.bench.table) {
    throw new KernbenchError('ERR_NO_TABLE', `--csv: bench '${b.loaded.name}' produces no table (a bench declares one with defineBench({ table: true }); the shipped ones are allreduce_perf, gemm_sweep, milestone_ccl), got '--csv ${b.values.csv}'`);
  }
  for (const flag of ['trace', 'csv'] as const) {
    const file = b.values[flag];
    if (typeof file === 'string') checkWritable(flag, file);
  }
}

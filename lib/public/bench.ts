// Runs on: main (a bench's run/evaluate) and executors (its spawned workers).
// The `kernbench/bench` entry point: what a bench is written with. Re-exports only.
export { z } from 'zod';
export { defineBench, type Bench, type BenchSpec, type BenchOptionsSchema, type OptionsOf } from '../bench/define.js';
export type { BenchContext, BenchResult, RunConfig, SessionRun } from '../bench/contract.js';

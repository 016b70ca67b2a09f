// Runs on: main. The `kernbench/bench` entry point: what a bench is written
// with. Re-exports only.
export type { BenchContext, BenchResult, BenchModule, RunConfig, SessionRun } from '../bench/contract.js';

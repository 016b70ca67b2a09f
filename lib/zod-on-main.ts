// Runs on: any thread. Owns: zod where kernbench checks definitions and options,
// which is the main thread only. Main loads every bench, algorithm and topology
// kind a run uses, and checks each (their options, `meta`, params) before any
// other thread starts; the coordinator and the executors import the same modules
// again to run them, and take what main checked. Zod was 95 files of source, so a
// worker's share of it was most of what it compiled at start-up (decision 0228);
// the build bundles it into one file now (decision 0272), still 0.7 MB to compile.
//
// A user's module that imports `z` from kernbench/bench or kernbench/kernel loads
// zod on every thread it is imported on, as before: this is kernbench's own use.
import { isMainThread } from 'node:worker_threads';
import type { z } from 'zod';

/** The zod namespace on the main thread; undefined on any other thread. */
export const zodOnMain: typeof z | undefined = isMainThread ? (await import('zod')).z : undefined;

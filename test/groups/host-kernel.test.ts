// Runs on: main thread (tap). One tap process for the host API, kernel operations, traces, their format and the event log, deadlock detection and the race check:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(8);
await import('../host-api.test.js');
await import('../launch-args.test.js');
await import('../kernel-ops.test.js');
await import('../declared-types.test.js');
await import('../comment-free-js.test.js');
await import('../ring-step-counts.test.js');
await import('../trace.test.js');
await import('../trace-format.test.js');
await import('../event-log.test.js');
await import('../deadlock.test.js');
await import('../deadlock-summary.test.js');
await import('../races.test.js');

// Runs on: main thread (tap). One tap process for the wall-clock benches:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(4);
await import('../wallclock-benches.test.js');
await import('../simgrid-ring.test.js');
await import('../alloc-worker-post.test.js');
await import('../atomics-cost.test.js');

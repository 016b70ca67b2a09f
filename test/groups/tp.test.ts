// Runs on: main thread (tap). One tap process for tensor parallelism:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(8);
await import('../tp.test.js');
await import('../tp-layer.test.js');
await import('../tp-layer-determinism.test.js');
await import('../tp-overlap.test.js');
await import('../tp-overlap-determinism.test.js');
await import('../tp-user-layer.test.js');

// Runs on: main thread (tap). One tap process for IPCQ backpressure, its statistics, parked receives and the channels a PE builds, runs without data, and the all-reduce points compared across layouts:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(8);
await import('../backpressure.test.js');
await import('../backpressure-stats.test.js');
await import('../parked-recv.test.js');
await import('../lazy-channels.test.js');
await import('../peer-views.test.js');
await import('../no-data.test.js');
await import('../no-data-memory.test.js');
await import('../idle-heap.test.js');
await import('../data-memory.test.js');
await import('../issue23-runs.test.js');
await import('../ccl-matrix-layouts.test.js');

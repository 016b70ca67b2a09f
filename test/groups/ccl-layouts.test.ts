// Runs on: main thread (tap). One tap process for CCL hello/send, determinism across layouts, algorithm resolution,
// and the partner-based collectives' laws and determinism (one set of 6 executors serves both):
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(6);
await import('../ccl-hello-send.test.js');
await import('../ccl-determinism.test.js');
await import('../ccl-resolve.test.js');
await import('../ccl-partners-laws.test.js');
await import('../ccl-partners-determinism.test.js');
await import('../ccl-partners-user.test.js');

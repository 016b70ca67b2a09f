// Runs on: main thread (tap). One tap process for the collectives, their laws and costs:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(6);
await import('../ccl-collectives.test.js');
await import('../ccl-all-to-all.test.js');
await import('../ccl-peers.test.js');
await import('../ccl-ops.test.js');
await import('../ring-passes.test.js');
await import('../ccl-world.test.js');
await import('../ccl-linear-in-p.test.js');
await import('../ccl-laws.test.js');
await import('../alpha-beta.test.js');
await import('../allreduce-perf.test.js');

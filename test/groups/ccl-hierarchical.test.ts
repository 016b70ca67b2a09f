// Runs on: main thread (tap). One tap process for hierarchical all-reduce, the topology kinds and a user's own kind, faults, error slots and root causes:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(8);
await import('../ccl-hierarchical.test.js');
await import('../topology-kinds.test.js');
await import('../topology-user-kind.test.js');
await import('../faults.test.js');
await import('../fault-owner-tags.test.js');
await import('../error-slots.test.js');
await import('../root-causes.test.js');
await import('../late-timers.test.js');

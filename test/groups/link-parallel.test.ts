// Runs on: main thread (tap). One tap process for tl.parallel over shared links (a user bench, and how a ring's pieces of shared links are timed, run through the in-process CLI, each run under the helper's guard) and the link claims, and which actor words a thread reads plainly:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(8);
await import('../link-parallel-hang.test.js');
await import('../link-pieces.test.js');
await import('../step-queue.test.js');
await import('../link-claims.test.js');
await import('../link-claims-unit.test.js');
await import('../owned-actors.test.js');
await import('../scheduler-counts.test.js');

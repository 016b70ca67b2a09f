// Runs on: main thread (tap). One tap process for shared links (timing.link_sharing) and their optimistic fast path:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(8);
await import('../link-sharing.test.js');
await import('../link-reach.test.js');
await import('../cycle-floors.test.js');
await import('../range-floors.test.js');
await import('../run-once.test.js');
await import('../link-own-kernel.test.js');
await import('../coordinator-fault.test.js');
await import('../coordinator-doorbell.test.js');
await import('../coordinator-rings.test.js');
await import('../abort-claim.test.js');
await import('../state-epoch.test.js');
await import('../actors-bound.test.js');
await import('../flow-requests.test.js');
await import('../memory-after-send.test.js');
await import('../link-one-way-collectives.test.js');
await import('../held-sends.test.js');

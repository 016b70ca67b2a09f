// Runs on: main thread (tap). One tap process for the all-to-all benches: the MoE
// dispatch and SimGrid's all-to-all and reduce cases (split from the ccl-p2p group,
// which took 35 s in a loaded CI, over a file's 30 s).
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(2);
await import('../moe-dispatch.test.js');
await import('../simgrid-alltoall.test.js');

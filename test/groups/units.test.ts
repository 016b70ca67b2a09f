// Runs on: main thread (tap). One tap process for unit tests of the pure modules (no threads)
// and the SimGrid oracle's program generator (scripts/simgrid/gen.mjs; no SimGrid needed):
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../dtype.test.js');
await import('../link-share.test.js');
await import('../ctl-load.test.js');
await import('../instruction-split.test.js');
await import('../docs.test.js');
await import('../find-deadlock.test.js');
await import('../kernel-math.test.js');
await import('../kernel-simd.test.js');
await import('../scheduler.test.js');
await import('../waiter-table.test.js');
await import('../route-cache.test.js');
await import('../arena-reserved.test.js');
await import('../fresh-horizon.test.js');
await import('../tabulate.test.js');
await import('../virtual-clock.test.js');
await import('../suite-groups.test.js');
await import('../ring-lines.test.js');
await import('../simgrid-gen.test.js');
await import('../vendored-deps.test.js');

// Runs on: main thread (tap). One tap process for spawn and what ranks return, node flags around a run and what a thread loads:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../spawn.test.js');
await import('../moved-results.test.js');
await import('../cli-node-flags.test.js');
await import('../executor-startup.test.js');
await import('../isolate-startup.test.js');

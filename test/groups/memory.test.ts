// Runs on: main thread (tap). One tap process for kernel concurrency, memory channels and IPCQ rounding:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../kernel-concurrency.test.js');
await import('../memory-channels.test.js');
await import('../arbiter-race.test.js');
await import('../ipcq-rounding.test.js');

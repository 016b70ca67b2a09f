// Runs on: main thread (tap). One tap process for CCL hello/send, determinism across layouts and algorithm resolution:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../ccl-hello-send.test.js');
await import('../ccl-determinism.test.js');
await import('../ccl-resolve.test.js');

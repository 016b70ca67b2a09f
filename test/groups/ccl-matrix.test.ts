// Runs on: main thread (tap). One tap process for the all-reduce correctness matrix on ring_1d_6, and the buffer kinds' order:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Every run is --threads 1: one executor, no reserve (test/helpers/reserve.ts).
await import('../ccl-matrix.test.js');

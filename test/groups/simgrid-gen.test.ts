// Runs on: main thread (tap). One tap process for the SimGrid oracle's program
// generator (scripts/simgrid/gen.mjs; no SimGrid needed): tap starts one process
// per group file (decision 0028). The file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../simgrid-gen.test.js');

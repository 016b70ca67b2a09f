// Runs on: main thread (tap). One tap process for process groups (a child process with a guard timeout: first), then
// the partner-based collectives' data tests (one executor):
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../ccl-groups.test.js');
await import('../ccl-partners.test.js');
await import('../ccl-partners-a2a.test.js');

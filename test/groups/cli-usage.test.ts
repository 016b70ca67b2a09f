// Runs on: main thread (tap). One tap process for CLI usage, configuration and validation:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../cli-usage.test.js');
await import('../cli-config.test.js');
await import('../cli-input-files.test.js');
await import('../cli-validate.test.js');
await import('../cli-bench-options.test.js');
await import('../config-limits.test.js');
await import('../readme.test.js');
await import('../cli-help.test.js');
await import('../usage-errors.test.js');

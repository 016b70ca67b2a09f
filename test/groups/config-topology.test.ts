// Runs on: main thread (tap). One tap process for configuration, topologies, the SIP fabrics, links and layering,
// and the CLI's usage, configuration and validation:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(8);
await import('../config.test.js');
await import('../topology-ccl.test.js');
await import('../topology-links.test.js');
await import('../pair-cache.test.js');
await import('../layering.test.js');
await import('../error-codes.test.js');
await import('../ccl-defaults.test.js');
await import('../arbiter.test.js');
await import('../issue23-small.test.js');
await import('../topology-fabrics.test.js');
await import('../cli-usage.test.js');
await import('../cli-config.test.js');
await import('../cli-input-files.test.js');
await import('../cli-validate.test.js');
await import('../cli-bench-options.test.js');
await import('../bench-options-function.test.js');
await import('../config-limits.test.js');
await import('../readme.test.js');
await import('../cli-help.test.js');
await import('../usage-errors.test.js');
await import('../runtime-bundles.test.js');

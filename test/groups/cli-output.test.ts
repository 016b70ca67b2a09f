// Runs on: main thread (tap). One tap process for CLI output, jitter, sweep shards and the CLI habits:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(8);
await import('../cli-output.test.js');
await import('../cli-jitter.test.js');
await import('../sweep-shard.test.js');
await import('../cli-habits.test.js');

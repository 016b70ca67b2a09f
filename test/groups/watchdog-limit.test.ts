// Runs on: main thread (tap). One tap process for some of the runs that are stopped before
// they end (--timeout, Ctrl-C, --max-virtual-time; decision 0095): one group a file, as
// each takes most of a file's time budget (decision 0028). Each file still runs alone: `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../watchdog-limit.test.js');

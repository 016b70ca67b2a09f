// Runs on: main thread (tap). One tap process for the runs that are stopped before they
// end through the library's interrupt, Ctrl-C and the virtual-time limit (decision 0095);
// the --timeout runs and a bench's import that never settles have groups of their own
// (decision 0028). Each file still runs alone: `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../watchdog-interrupt.test.js');
await import('../watchdog-sigint.test.js');
await import('../watchdog-limit.test.js');

// Runs on: main thread (tap). One tap process for the runs that end at --timeout: a kernel
// whose virtual time grows without bound, and a bench whose import never ends (decision
// 0095); the short file of a bench whose top-level await never settles, a process run too,
// shares it. Most of their time is the timeouts' wait (decision 0028). Named run-timeout,
// not watchdog-*: tap starts the groups in name order, and a long group started last
// leaves the other job idle at the end (decision 0210). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../watchdog-timeout.test.js');
await import('../watchdog-import.test.js');
await import('../never-settled.test.js');

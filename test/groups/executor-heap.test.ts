// Runs on: main thread (tap). A group of its own: the threads of the heap file have a
// small heap, and running a kernel out of it three times (one a layout) takes much of a
// group's time budget (decision 0028); the kernel-timer file and the milestone run,
// short, share it. Each file still runs alone: `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// The milestone's largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(6);
await import('../executor-heap.test.js');
await import('../kernel-timers.test.js');
await import('../milestone.test.js');
await import('../pool-heap.test.js');
await import('../tiering.test.js');
await import('../bench-deopts.test.js');

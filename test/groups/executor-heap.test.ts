// Runs on: main thread (tap). Its own group: the threads of this file have a small
// heap, and running a kernel out of it three times (one a layout) takes most of a
// group's time budget (decision 0028). The file still runs alone:
// `npx tap dist/test/executor-heap.test.js`.

// Each file in turn, awaited: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../executor-heap.test.js');

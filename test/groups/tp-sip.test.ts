// Runs on: main thread (tap). The layer's GEMMs over a cube's PEs (decision
// 0116), the transformer_layer sweep and the overlapped layer's trace: apart
// from the tensor-parallel group, which with them ran past tap's timeout on a
// loaded machine (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

// Awaited, as every group does: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
// Its largest run's executors, started once: a pool that grows restarts its threads (test/helpers/reserve.ts).
(await import('../helpers/reserve.js')).reserveExecutors(8);
await import('../tp-sip-gemm.test.js');
await import('../tp-sweep.test.js');
await import('../tp-overlap-trace.test.js');

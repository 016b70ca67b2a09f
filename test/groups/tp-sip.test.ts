// Runs on: main thread (tap). The layer's GEMMs over a cube's PEs (decision
// 0116), in a process of its own: beside the tensor-parallel group it pushed
// that group past tap's timeout on a loaded machine (decision 0028).
// `npx tap dist/test/tp-sip-gemm.test.js` runs the file alone.

// Awaited, as every group does: a file whose tests register only after an async module
// (the kind catalog's top-level await) would otherwise be evaluated after tap ended.
export {};
await import('../tp-sip-gemm.test.js');

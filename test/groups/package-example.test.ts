// Runs on: main thread (tap). One tap process for the example project's own tests,
// installed from the tarball (test/package-example.test.ts): beside the package group,
// so that neither is over its time budget. The file still runs alone:
// `npx tap dist/test/package-example.test.js`.
export {};
await import('../package-example.test.js');

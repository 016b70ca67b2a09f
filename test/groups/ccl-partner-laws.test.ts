// Runs on: main thread (tap). One tap process for the partner-based collectives'
// laws and determinism (decision 0028). Each file still runs alone: `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited (see ccl-basics.test.ts).
export {};
await import('../ccl-partners-laws.test.js');
await import('../ccl-partners-determinism.test.js');
await import('../ccl-partners-user.test.js');

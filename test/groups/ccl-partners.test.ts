// Runs on: main thread (tap). One tap process for the partner-based collectives'
// data tests (decision 0028). Each file still runs alone: `npx tap dist/test/NAME.test.js`.

// Each file in turn, awaited (see ccl-basics.test.ts).
export {};
await import('../ccl-partners.test.js');
await import('../ccl-partners-a2a.test.js');

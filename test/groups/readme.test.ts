// Runs on: main thread (tap). One tap process for the README's transcripts that run a
// simulation (runs and two stresses: a group of their own, so that the
// CLI output group stays well inside tap's per-file timeout; decision 0028). Each file
// still runs alone: `npx tap dist/test/NAME.test.js`.

import '../readme-runs.test.js';

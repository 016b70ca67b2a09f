// Runs on: main thread (tap). One tap process for the SimGrid oracle's program
// generator (scripts/simgrid/gen.mjs; no SimGrid needed): tap starts one process
// per group file (decision 0028). The file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../simgrid-gen.test.js';

// Runs on: main thread (tap). One tap process for runs without data:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../no-data.test.js';
import '../no-data-memory.test.js';
import '../data-memory.test.js';
import '../issue23-runs.test.js';

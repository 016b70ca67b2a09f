// Runs on: main thread (tap). One tap process for deadlock detection and the race check:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../deadlock.test.js';
import '../deadlock-summary.test.js';
import '../races.test.js';

// Runs on: main thread (tap). One tap process for IPCQ backpressure, its statistics and parked receives:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../backpressure.test.js';
import '../backpressure-stats.test.js';
import '../parked-recv.test.js';

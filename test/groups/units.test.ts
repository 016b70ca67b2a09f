// Runs on: main thread (tap). One tap process for unit tests of the pure modules (no threads):
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../dtype.test.js';
import '../docs.test.js';
import '../find-deadlock.test.js';
import '../kernel-math.test.js';
import '../kernel-simd.test.js';
import '../scheduler.test.js';
import '../tabulate.test.js';
import '../virtual-clock.test.js';
import '../suite-groups.test.js';

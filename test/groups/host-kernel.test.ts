// Runs on: main thread (tap). One tap process for the host API and kernel operations:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../host-api.test.js';
import '../kernel-ops.test.js';
import '../declared-types.test.js';

// Runs on: main thread (tap). One tap process for the collectives, their laws and costs:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../ccl-collectives.test.js';
import '../ccl-all-to-all.test.js';
import '../ccl-peers.test.js';
import '../ccl-ops.test.js';
import '../ccl-world.test.js';
import '../ccl-laws.test.js';
import '../alpha-beta.test.js';
import '../allreduce-perf.test.js';

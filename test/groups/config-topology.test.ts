// Runs on: main thread (tap). One tap process for configuration, topologies, links and layering (no threads):
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../config.test.js';
import '../topology-ccl.test.js';
import '../topology-links.test.js';
import '../layering.test.js';
import '../error-codes.test.js';
import '../ccl-defaults.test.js';
import '../link-share.test.js';
import '../arbiter.test.js';
import '../issue23-small.test.js';

// Runs on: main thread (tap). One tap process for shared links (timing.link_sharing) and the SIP fabrics:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../link-sharing.test.js';
import '../link-optimistic.test.js';
import '../link-intervals.test.js';
import '../topology-fabrics.test.js';
import '../topology-user-kind.test.js';

// Runs on: main thread (tap). One tap process for tensor parallelism:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../tp.test.js';
import '../tp-layer.test.js';
import '../tp-layer-determinism.test.js';
import '../tp-overlap.test.js';
import '../tp-overlap-determinism.test.js';
import '../tp-user-layer.test.js';

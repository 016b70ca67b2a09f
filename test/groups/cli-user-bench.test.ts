// Runs on: main thread (tap). One tap process for user benches through the CLI:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../cli-user-bench.test.js';
import '../readme-snippets.test.js';

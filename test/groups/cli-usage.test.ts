// Runs on: main thread (tap). One tap process for CLI usage, configuration and validation:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../cli-usage.test.js';
import '../cli-config.test.js';
import '../cli-input-files.test.js';
import '../cli-validate.test.js';
import '../cli-bench-options.test.js';
import '../config-limits.test.js';
import '../readme.test.js';
import '../cli-help.test.js';

// Runs on: main thread (tap). One tap process for CLI output, jitter and sweep shards:
// tap starts one process per group file, and the files below share its start-up
// and its loading of the library (decision 0028). Each file still runs alone:
// `npx tap dist/test/NAME.test.js`.

import '../cli-output.test.js';
import '../cli-jitter.test.js';
import '../sweep-shard.test.js';
import '../cli-habits.test.js';
import '../report.test.js';

// Runs on: main thread (tap). One tap process for tl.parallel over shared links (a user bench
// run through the in-process CLI, each run under the helper's guard): tap starts one process
// per group file, and the files below share its start-up and its loading of the library
// (decision 0028). Each file still runs alone: `npx tap dist/test/NAME.test.js`.

import '../link-parallel-hang.test.js';

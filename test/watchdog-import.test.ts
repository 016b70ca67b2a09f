// Runs on: main thread (tap). Covers (issue 23 item 3; decision 0095): an endless
// loop at import and a top-level await on a live timer end at `run --timeout` with
// exit 1 and a report naming the main host as importing the bench. Asserts
// codes and the report's structured fields; no assertion is on wall time (a timeout
// is an input). Split from one file so that each stays within a file's time budget;
// the shared pieces are test/helpers/stopped.ts.
import t from 'tap';
import { kernbenchProcess } from './helpers/cli.js';
import { fixture, stoppedJson } from './helpers/stopped.js';

for (const [name, what] of [
  ['stuck-import-loop', 'an endless loop at import'],
  ['stuck-await-timer', 'a top-level await on a live timer'],
] as const) {
  t.test(`${what} ends at --timeout with exit 1 and names the main host as importing the bench`, async (t) => {
    const r = await kernbenchProcess(['run', '--bench', fixture(name), '--timeout', '2', '--json']);
    t.equal(r.timedOut, false, 'answers instead of hanging');
    t.equal(r.exitCode, 1);
    t.match(r.stderr, '[ERR_TIMEOUT]');
    const e = stoppedJson(r.stdout);
    t.equal(e.code, 'ERR_TIMEOUT');
    t.same(e.actors.map((a) => [a.who, a.state]), [['main host', 'running']]);
    t.ok(e.actors[0].line.includes(fixture(name)), e.actors[0].line);
  });
}

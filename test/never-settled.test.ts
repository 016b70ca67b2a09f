// Runs on: main thread (tap). Covers issue 23 item 6: a bench whose top-level await never
// settles (nothing left to run: no timer, no I/O) is named (ERR_NEVER_SETTLED, exit 1)
// instead of Node's silent exit 13. Through the binary as a user runs it (execa): the
// condition is the process's own end, so it cannot run in-process.
import t from 'tap';
import { kernbenchProcess } from './helpers/cli.js';
import { fixture } from './helpers/stopped.js';

t.test('a bench whose top-level await never settles exits 1 with ERR_NEVER_SETTLED naming the module still loading', async (t) => {
  const bench = fixture('never-settled');
  const r = await kernbenchProcess(['run', '--bench', bench]);
  t.equal(r.timedOut, false, 'answers instead of hanging');
  t.equal(r.exitCode, 1, `exit 1, not Node's 13; stderr: ${JSON.stringify(r.stderr)}`);
  t.match(r.stderr, '[ERR_NEVER_SETTLED]');
  t.ok(r.stderr.includes(bench), `names ${bench}: ${r.stderr}`);
});

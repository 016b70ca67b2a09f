// Runs on: main thread (tap). Covers: the README's `$ node bin/kernbench.js ...`
// transcripts that run a simulation (run, stress) print what the README quotes:
// crit_ns, digests, the --json object, the stress summary and its TAP. The others are
// test/readme.test.ts.
import t from 'tap';
import { checkTranscripts, README, startsThreads, transcripts } from './helpers/readme.js';

t.test('the README quotes the tool: each transcript that runs a simulation prints the lines quoted', async (t) => {
  const list = transcripts(README).filter(startsThreads);
  t.ok(list.length >= 5, `found the transcripts (${list.length})`);
  await checkTranscripts(t, list);
});

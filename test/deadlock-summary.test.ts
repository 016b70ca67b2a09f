// Runs on: main thread (tap). Covers: a deadlock report that reads the same at
// any scale (issue 23 item 4): the message is a few lines — how many actors wait,
// grouped by what they wait for, and the PEs' wait-for cycle — and --verbose adds
// every waiter's own line. A user's bench (test/fixtures/ring-deadlock-bench.ts,
// public API) deadlocks a ring of 8 ranks under --threads 1, rank and pe.
import t from 'tap';
import { kernbench } from './helpers/cli.js';

const BENCH = 'dist/test/fixtures/ring-deadlock-bench.js';
const RANKS = 8;
// One cube of one PE per SIP: 8 ranks stay cheap.
const SMALL = ['--topology', 'ring_1d_6', '--set', `system.sips.count=${RANKS}`, '--set', 'sip.cube_mesh.w=1', '--set', 'sip.cube_mesh.h=1'];

for (const threads of ['1', 'rank', 'pe']) {
  t.test(`a ring deadlock of ${RANKS} ranks is reported as a summary of a few lines (--threads ${threads})`, async (t) => {
    const r = await kernbench(['run', '--bench', BENCH, ...SMALL, '--threads', threads]);
    t.equal(r.timedOut, false, 'answers instead of hanging');
    t.equal(r.exitCode, 1, 'exits 1');
    t.match(r.stderr, /DeadlockError \[ERR_DEADLOCK\]/);
    t.match(r.stderr, `${3 * RANKS + 1} actors wait:`, 'counts every waiter: a kernel, an inbound channel and a host per rank, and main');
    t.match(r.stderr, new RegExp(`^ {4}${RANKS} PEs' inbound west channels wait for IPCQ data from their west neighbour, message #0, since `, 'm'), 'one line for every rank\'s receive');
    t.match(r.stderr, new RegExp(`^ {4}${RANKS} rank hosts wait for a kernel to finish`, 'm'), 'one line for every rank\'s host');
    t.match(r.stderr, `form one cycle: ${RANKS} PEs (PE (sip 0, cube 0, pe 0) waits for PE (sip ${RANKS - 1}, cube 0, pe 0)`, 'the one cycle, in its order');
    t.ok(r.stderr.trim().split('\n').length <= 10, `a few lines, not one per waiter (got ${r.stderr.trim().split('\n').length})`);
    t.notMatch(r.stderr, 'rank 3 host waits', 'no waiter\'s own line without --verbose');
  });
}

t.test('--verbose adds every waiter\'s own line after the summary', async (t) => {
  const r = await kernbench(['run', '--bench', BENCH, ...SMALL, '--threads', '1', '--verbose']);
  t.equal(r.exitCode, 1);
  t.match(r.stderr, `every waiter of the deadlock (${3 * RANKS + 1})`);
  for (let rank = 0; rank < RANKS; rank++) t.match(r.stderr, `rank ${rank} host waits for a kernel on PE (sip ${rank}, cube 0, pe 0)`, `names rank ${rank}'s host`);
  t.match(r.stderr, `PE (sip 0, cube 0, pe 0) inbound west channel waits for IPCQ data from PE (sip ${RANKS - 1}, cube 0, pe 0)`);
});

// Runs on: main thread (tap). Covers: the actors' lower bound the arbiters take
// (lib/coordinator/snapshot.ts actorsBound): which actors count, and that a
// running actor that publishes (a blocked actor's condition becomes true) and then
// raises its own clock word between two reads cannot lift the bound past the time
// it published. Another thread's interleaving is played deterministically: a
// wrapped Atomics.load performs that thread's two writes right after the bound
// reads the blocked actor's wait word. Read in actor order, the bound came out as
// the raised clock; the link arbiter then made final what a flow joined before,
// and threw ERR_INTERNAL (a rare CI stall of recursive doubling on 5 ranks).
import t from 'tap';
import { actorsBound } from '../lib/coordinator/snapshot.js';
import { ACTOR, ACTOR_STATE, PE } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { Scheduler } from '../lib/sync/scheduler.js';
import { markActive } from '../lib/shm/active-actors.js';

function fresh(): SharedState {
  return SharedState.create({ executors: 1, pes: 4, hosts: 4, nSlots: 2, slotSize: 64, cubes: 4, arenaBytes: 1024, links: 0 });
}

/** Publish actor `a` as in `state` at `clockPs` (BLOCKED: on ctl[word] >= target), as the scheduler does. */
function put(sh: SharedState, a: number, state: number, clockPs: number, wait?: { word: number; target: number }): void {
  const L = sh.layout;
  sh.times[L.clock(a)] = clockPs;
  if (wait) {
    Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_WORD), wait.word);
    Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_TARGET), wait.target);
  }
  Atomics.store(sh.ctl, L.actor(a, ACTOR.STATE), state);
  markActive(sh.ctl, L, a, state === ACTOR_STATE.RUNNING || state === ACTOR_STATE.BLOCKED);
}

t.test('which actors bound: running and ready ones by their clock, not blocked, idle or the caller', async (t) => {
  const sh = fresh();
  const L = sh.layout;
  const word = L.pe(3, PE.DONE_SEQ);
  t.equal(actorsBound(sh, -1, -Infinity), Infinity, 'nobody active');
  put(sh, L.peActor(0), ACTOR_STATE.BLOCKED, 50, { word, target: 1 });
  t.equal(actorsBound(sh, -1, -Infinity), Infinity, 'a blocked actor whose condition is false bounds nothing');
  put(sh, L.peActor(1), ACTOR_STATE.RUNNING, 300);
  put(sh, L.peActor(2), ACTOR_STATE.IDLE, 10);
  t.equal(actorsBound(sh, -1, -Infinity), 300, 'the running one');
  Atomics.store(sh.ctl, word, 1);
  t.equal(actorsBound(sh, -1, -Infinity), 50, 'the blocked one, once its condition holds');
  t.equal(actorsBound(sh, L.peActor(0), -Infinity), 300, 'not the caller itself');
  t.ok(actorsBound(sh, -1, 400) <= 400, 'stops at a bound at or below stopAt');
});

t.test('a publish and then a raise of the publisher\'s clock between the reads does not lift the bound past the publish', async (t) => {
  const sh = fresh();
  const L = sh.layout;
  const word = L.pe(3, PE.DONE_SEQ);
  // Actor 0 waits for `word` (read first in actor order); actor 1 runs at 200.
  const waiting = L.peActor(0);
  const publisher = L.peActor(1);
  t.ok(waiting < publisher, 'the waiting actor comes first in actor order');
  put(sh, waiting, ACTOR_STATE.BLOCKED, 100, { word, target: 1 });
  put(sh, publisher, ACTOR_STATE.RUNNING, 200);
  const load = Atomics.load;
  t.teardown(() => {
    Atomics.load = load;
  });
  let played = false;
  // The other thread: right after the bound reads the wait word, actor 1 publishes it
  // (at its time, 200) and goes on running, its clock word raised to 10 000.
  Atomics.load = ((a: Int32Array, i: number): number => {
    const v = load(a, i);
    if (a === sh.ctl && i === word && !played) {
      played = true;
      Atomics.store(sh.ctl, word, 1);
      sh.times[L.clock(publisher)] = 10_000;
    }
    return v;
  }) as typeof Atomics.load;
  const bound = actorsBound(sh, -1, -Infinity);
  Atomics.load = load;
  t.ok(played, 'the interleaving was played');
  t.ok(bound <= 200, `the bound is at most the publisher's time when it published (200), got ${bound}`);
});

t.test('an actor unblocked between the reads (its state stored before its epoch bump) is still counted', async (t) => {
  const sh = fresh();
  const L = sh.layout;
  const word = L.pe(3, PE.DONE_SEQ);
  const waking = L.peActor(0);
  // Ready to run: its condition holds, it resumes at its block time, 100.
  put(sh, waking, ACTOR_STATE.BLOCKED, 100, { word, target: 1 });
  Atomics.store(sh.ctl, word, 1);
  put(sh, L.peActor(1), ACTOR_STATE.RUNNING, 5_000);
  const load = Atomics.load;
  t.teardown(() => {
    Atomics.load = load;
  });
  const stateWord = L.actor(waking, ACTOR.STATE);
  let played = false;
  // Its thread resumes it right after the bound first reads its state as BLOCKED.
  Atomics.load = ((a: Int32Array, i: number): number => {
    const v = load(a, i);
    if (a === sh.ctl && i === stateWord && v === ACTOR_STATE.BLOCKED && !played) {
      played = true;
      Atomics.store(sh.ctl, stateWord, ACTOR_STATE.RUNNING);
    }
    return v;
  }) as typeof Atomics.load;
  const bound = actorsBound(sh, -1, -Infinity);
  Atomics.load = load;
  t.ok(played, 'the interleaving was played');
  t.equal(bound, 100, 'the resumed actor bounds it at its clock');
});

t.test('actors turned active through the Scheduler are found in every word of a bitmap whose summary takes two words; a word whose actors went idle stays in the summary', async (t) => {
  // 80 PEs and 4 hosts: over 1 024 actors, so over 32 bitmap words and a summary of two words.
  const sh = SharedState.create({ executors: 1, pes: 80, hosts: 4, nSlots: 2, slotSize: 64, cubes: 20, arenaBytes: 1024, links: 0 });
  const L = sh.layout;
  t.equal(L.activeSummaryWords, 2, 'the summary has two words');
  const sched = new Scheduler(sh, 0, false, null);
  const first = L.peActor(0);
  const last = L.hostActor(3);
  t.ok(last >>> 5 >= 32, `the last actor's word (${last >>> 5}) is in the summary's second word`);
  const mid = L.peActor(40);
  const midWord = mid >>> 5;
  t.equal(actorsBound(sh, -1, -Infinity), Infinity, 'nobody active');
  sh.times[L.clock(last)] = 70;
  sched.setState(last, ACTOR_STATE.RUNNING);
  t.equal(actorsBound(sh, -1, -Infinity), 70, 'an actor of the last word');
  sh.times[L.clock(mid)] = 50;
  sched.setState(mid, ACTOR_STATE.RUNNING);
  sh.times[L.clock(first)] = 90;
  sched.setState(first, ACTOR_STATE.RUNNING);
  t.equal(actorsBound(sh, -1, -Infinity), 50, 'the lowest of three words');
  sched.setState(mid, ACTOR_STATE.IDLE);
  t.equal(actorsBound(sh, -1, -Infinity), 70, 'an idle actor bounds nothing');
  t.equal(Atomics.load(sh.ctl, L.activeWord(mid)), 0, 'its word is empty');
  t.not(Atomics.load(sh.ctl, L.activeSummaryWord(midWord)) & (1 << (midWord & 31)), 0, 'and stays in the summary');
  sh.times[L.clock(mid + 1)] = 10;
  sched.setState(mid + 1, ACTOR_STATE.RUNNING);
  t.equal(actorsBound(sh, -1, -Infinity), 10, 'a new actor of that word is found');
  t.equal(Atomics.load(sh.ctl, L.activeSummaryWord(0)), 1 | (1 << midWord), 'the summary names the words ever active, and no other');
});

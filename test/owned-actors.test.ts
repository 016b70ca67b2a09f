// Runs on: main thread (tap), no threads. Covers: which actor words a thread reads
// with a plain load (lib/sync/owned.ts, decision 0230): every word of its own PEs'
// actors (kernel, channels, branches), the wait words of its own ranks' hosts but
// never their state (main writes it as it hands a rank over), nothing of another
// thread's actors or of another session; and the value read is the word's either way.
import t from 'tap';
import { ACTOR, ACTORS_PER_PE } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { actorWord, ownsWord, setOwnActors } from '../lib/sync/owned.js';

const dims = { executors: 2, pes: 4, hosts: 3, nSlots: 2, slotSize: 64, cubes: 4, arenaBytes: 1024, links: 8 };

t.test('a thread owns its PEs\' actors and its hosts\' wait words, nothing else', async (t) => {
  const sh = SharedState.create(dims);
  const L = sh.layout;
  t.notOk(ownsWord(sh, L.peActor(0), ACTOR.STATE), 'before any session is set: nothing');
  // Executor 1 runs PEs 2 and 3 and rank 1's host; executor 0 the rest.
  setOwnActors(sh, [0, 0, 1, 1], [0, 1], 1);
  for (const pe of [2, 3]) {
    for (let i = 0; i < ACTORS_PER_PE; i++) {
      t.ok(ownsWord(sh, L.peActor(pe) + i, ACTOR.STATE) && ownsWord(sh, L.peActor(pe) + i, ACTOR.WAIT_WORD), `PE ${pe}'s actor ${i}: every word`);
    }
  }
  for (const pe of [0, 1]) t.notOk(ownsWord(sh, L.peActor(pe), ACTOR.STATE) || ownsWord(sh, L.channelActor(pe, 0), ACTOR.WAIT_KIND), `PE ${pe}: another thread's`);
  const host1 = L.hostActor(1);
  t.notOk(ownsWord(sh, host1, ACTOR.STATE), 'its rank\'s host: not the state, which main writes too');
  for (const f of [ACTOR.WAIT_WORD, ACTOR.WAIT_TARGET, ACTOR.WAIT_KIND, ACTOR.WAIT_AUX]) t.ok(ownsWord(sh, host1, f), `its rank's host: wait word ${f}`);
  t.notOk(ownsWord(sh, L.hostActor(0), ACTOR.WAIT_KIND), 'another rank\'s host: nothing');
  t.notOk(ownsWord(sh, L.hostActor(L.mainHost), ACTOR.WAIT_KIND), 'main\'s host: nothing');
  const other = SharedState.create(dims);
  t.notOk(ownsWord(other, L.peActor(2), ACTOR.STATE), 'another session\'s words: loaded');
  // The value is the word's, read either way.
  Atomics.store(sh.ctl, L.actor(L.peActor(2), ACTOR.WAIT_AUX), 7);
  Atomics.store(sh.ctl, L.actor(L.peActor(0), ACTOR.WAIT_AUX), 9);
  t.equal(actorWord(sh, L.peActor(2), ACTOR.WAIT_AUX), 7);
  t.equal(actorWord(sh, L.peActor(0), ACTOR.WAIT_AUX), 9);
});

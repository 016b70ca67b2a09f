// Runs on: any thread that runs an arbiter pass or the deadlock check (the
// coordinator, or an actor's thread running a pass for its own request). Owns:
// the coordinator's shared snapshot helpers — what the actors' published
// states say about the virtual time they can still act at — used by the memory
// arbiter (./arbiter.ts), the link arbiter (./link-arbiter.ts) and the deadlock
// detector (./deadlock.ts). Pure reads of shared views, tested without threads.
//
// Every actor's lower bound on the virtual time of anything it will still do:
//   RUNNING                       its published clock (clocks only go up, so a
//                                 stale value is still a lower bound)
//   BLOCKED, condition true       its published clock (it is about to run)
//   BLOCKED, condition false      none of its own: only an actor that runs can
//                                 wake it, and it then runs no earlier than that
//                                 actor's bound
//   IDLE, DONE                    none: only a running actor (or a command in
//                                 flight: then no grant now) starts it again
// A snapshot is exact in the way the deadlock detector's is, with one count
// for all actors: stateEpoch (../shm/shared-state.ts), the sum of every thread's EXEC.STATE_EPOCH (each
// bumped before every state store of an actor the thread runs, and never lowered),
// is read before and after by the caller, and equal means nobody changed state in between:
// a state read in between is one stored after a bump the first read saw, so whatever the
// actor published before it (a request before its wait) is seen too (lib/sync/scheduler.ts).
// A running actor may raise its clock word with no change of state, so the running
// actors' clocks are read before the blocked actors' conditions (actorsBound).
import { ACTOR, ACTOR_STATE, HEADER } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';

/** A launch command reserved and not yet committed: it starts a kernel at a time no snapshot of the actors shows (one load: HEADER.COMMANDS_IN_FLIGHT). */
export function commandInFlight(sh: SharedState): boolean {
  return Atomics.load(sh.ctl, HEADER.COMMANDS_IN_FLIGHT) !== 0;
}

/**
 * The lowest bound of the active actors other than `self` (see the header:
 * RUNNING, or BLOCKED with a true condition: the clock word; otherwise none),
 * or Infinity. Stops at the first bound <= `stopAt`: a pass only asks whether
 * one is that low (the memory arbiter), or wants the lowest (stopAt -Infinity,
 * the link arbiter). Take it inside an epoch snapshot.
 *
 * In two sweeps: every RUNNING actor's clock word first, then every active
 * actor as it is then (a RUNNING one again, a BLOCKED one by its condition).
 * A running actor may publish (making a blocked actor's condition true) and
 * then raise its own clock word without a change of state
 * (a send's fresher bound, a self-granted access's done time), so the epoch does
 * not see it. Read in actor order, the blocked actor could be read before the
 * publish and the publisher after the raise: a bound past the time the woken
 * actor acts at (the link arbiter then made final what a flow it started joined
 * before: ERR_INTERNAL). With the clocks read first, a publish before a blocked
 * actor's read shows it as ready, and one after it comes from an actor whose
 * clock was read before it published, so at or before the publish.
 */
export function actorsBound(sh: SharedState, self: number, stopAt: number): number {
  const L = sh.layout;
  const ctl = sh.ctl;
  const times = sh.times;
  // Word indices by arithmetic, not method calls: this loop is the cost of a self-grant.
  const stride = L.actor(1, 0) - L.actor(0, 0);
  const state0 = L.actor(0, ACTOR.STATE);
  const word0 = L.actor(0, ACTOR.WAIT_WORD);
  const target0 = L.actor(0, ACTOR.WAIT_TARGET);
  const clock0 = L.clock(0);
  const active0 = L.activeWord(0);
  const summary0 = L.activeSummaryWord(0);
  let bound = Infinity;
  // Only active actors (RUNNING or BLOCKED) can bound anything: read the bitmap's summary, the
  // words it names, then those actors (../shm/active-actors.ts).
  for (let sweep = 0; sweep < 2; sweep++) {
    for (let si = 0; si < L.activeSummaryWords; si++) {
      let words = Atomics.load(ctl, summary0 + si);
      while (words !== 0) {
        const lowWord = words & -words;
        words ^= lowWord;
        const wi = si * 32 + (31 - Math.clz32(lowWord));
        let bits = Atomics.load(ctl, active0 + wi);
        while (bits !== 0) {
          const low = bits & -bits;
          bits ^= low;
          const a = wi * 32 + (31 - Math.clz32(low));
          if (a === self) continue;
          const o = a * stride;
          const s = Atomics.load(ctl, state0 + o);
          // The second sweep takes running actors again: one unblocked between the sweeps
          // (its state stored before its epoch bump) would otherwise be in neither.
          const counts = s === ACTOR_STATE.RUNNING || (sweep === 1 && s === ACTOR_STATE.BLOCKED && Atomics.load(ctl, Atomics.load(ctl, word0 + o)) >= Atomics.load(ctl, target0 + o));
          if (counts && times[clock0 + a] < bound) {
            bound = times[clock0 + a];
            if (bound <= stopAt) return bound;
          }
        }
      }
    }
  }
  return bound;
}

// Runs on: every thread that hosts actors (set by its ThreadEnv), read by the
// launch horizon and the link reach on any thread (./link-claims.ts,
// ./link-reach.ts, ./end-bounds.ts). Owns: which actors this thread runs, so that
// their words are read with a plain load instead of Atomics.load
// (docs/decisions/0230-a-thread-reads-its-own-actors-plainly.md).
//
// A PE's actors' state and wait words (ACTOR.STATE, WAIT_KIND, WAIT_AUX, WAIT_WORD,
// WAIT_TARGET) are written by their own thread's scheduler only (./scheduler.ts
// block, setState). That thread reads its own last write with a plain load: no
// other thread writes the word, so there is no race and nothing to order. A rank's
// host is the same for its wait words, not its state: main sets it RUNNING as it
// hands the rank to its thread (lib/session/session.ts), so that word is always
// loaded with Atomics.load. V8 does
// not inline Atomics.load here (~100 instructions a call, decision 0216); a plain
// load of an Int32Array element is a few. Actors of other threads are read with
// Atomics.load as before. A thread with no actors (the coordinator) owns none.
import { ACTOR, ACTORS_PER_PE } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';

/** The session whose actors `own` names (null: none on this thread). */
let ownShared: SharedState | null = null;
/** By actor id: ALL_WORDS for a PE's actor this thread runs, WAIT_WORDS for a rank's host it runs, else 0. */
let own = new Uint8Array(0);
const ALL_WORDS = 1;
const WAIT_WORDS = 2;

/**
 * This thread runs the actors of the PEs with `peExecutor[pe] === executor` and the
 * hosts with `hostExecutor[host] === executor`, for session `sh` (until another call).
 */
export function setOwnActors(sh: SharedState, peExecutor: readonly number[], hostExecutor: readonly number[], executor: number): void {
  const L = sh.layout;
  const mine = new Uint8Array(L.actors);
  for (let pe = 0; pe < peExecutor.length && pe < L.dims.pes; pe++) {
    if (peExecutor[pe] !== executor) continue;
    const a0 = L.peActor(pe);
    mine.fill(ALL_WORDS, a0, a0 + ACTORS_PER_PE);
  }
  for (let host = 0; host < hostExecutor.length && host < L.dims.hosts; host++) if (hostExecutor[host] === executor) mine[L.hostActor(host)] = WAIT_WORDS;
  own = mine;
  ownShared = sh;
}

/** Is this thread the only writer of word `field` (ACTOR) of actor `a` in session `sh`? */
export function ownsWord(sh: SharedState, a: number, field: number): boolean {
  if (sh !== ownShared) return false;
  const o = own[a];
  return o === ALL_WORDS || (o === WAIT_WORDS && field !== ACTOR.STATE);
}

/** Word `field` of actor `a` (ACTOR): a plain load when this thread is the word's only writer, else Atomics.load. */
export function actorWord(sh: SharedState, a: number, field: number): number {
  const w = sh.layout.actor(a, field);
  return ownsWord(sh, a, field) ? sh.ctl[w] : Atomics.load(sh.ctl, w);
}

// Runs on: any thread that runs PEs (their floors' writer) and every thread that
// checks pieces of shared links or takes a launch horizon (readers: ./link-reach.ts,
// ./link-claims.ts), the coordinator included. Owns: a PE's floor word
// (layout.floor): while the PE's kernel is active (its actor RUNNING or BLOCKED), the
// later of the clock it last published and its sends' arrivals alone, a lower bound
// on its kernel's end (decision 0023's end rule); -Infinity while it has none.
//
// It is what `max(clock, arrivals)` read from the actor's state word, its clock and
// its flows' arrivals gave (three lines of three arrays a PE), kept in one dense word
// a PE by the writers of those (decision 0251): the reach check of a piece on a large
// ring reads several PEs' floors, and the launch horizon every PE's. A floor only
// rises while its kernel is active, so a reader that sees an older value sees a lower
// bound still; it falls to -Infinity (the horizon then bounds the PE) before its
// kernel's end is published, so no later launch on the PE can meet a floor from before.
import { ACTORS_PER_PE, DIR_COUNT, FLOW } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';

/** PE `pe`'s floor: -Infinity with no active kernel. */
export function peFloor(sh: SharedState, pe: number): number {
  return sh.times[sh.layout.floor(pe)];
}

/** Raise PE `pe`'s floor to `t` while its kernel is active (a published clock or an arrival alone). */
export function raisePeFloor(sh: SharedState, pe: number, t: number): void {
  const w = sh.layout.floor(pe);
  const f = sh.times[w];
  if (f !== -Infinity && t > f) sh.times[w] = t;
}

/** Publish actor `actor`'s clock `t` (the word the arbiters and horizons read); a PE's actor raises its PE's floor with it. */
export function publishClock(sh: SharedState, actor: number, t: number): void {
  sh.times[sh.layout.clock(actor)] = t;
  const pe = peOfActor(sh, actor);
  if (pe >= 0) raisePeFloor(sh, pe, t);
}

/** The later of PE `pe`'s published clock and its sends' arrivals alone, read now from their words: its floor while its kernel is active. */
export function floorNow(sh: SharedState, pe: number): number {
  const L = sh.layout;
  const times = sh.times;
  let f = times[L.clock(L.peActor(pe))];
  for (let d = 0; d < DIR_COUNT; d++) f = Math.max(f, times[L.flow(pe, d, FLOW.ARRIVAL_PS)]);
  return f;
}

/**
 * Actor `actor` is now active (`active`) or not, as its state word is about to say: when
 * it is a PE's (its kernel's main flow), set that PE's floor from its clock and arrivals,
 * or to -Infinity. The caller is the actor's thread, before it stores the state.
 */
export function actorActive(sh: SharedState, actor: number, active: boolean): void {
  const pe = peOfActor(sh, actor);
  if (pe >= 0) sh.times[sh.layout.floor(pe)] = active ? floorNow(sh, pe) : -Infinity;
}

/** The PE whose kernel's main flow actor `actor` is, or -1 (a channel's, a branch's, a host's). */
function peOfActor(sh: SharedState, actor: number): number {
  return actor % ACTORS_PER_PE === 0 && actor < sh.layout.dims.pes * ACTORS_PER_PE ? actor / ACTORS_PER_PE : -1;
}

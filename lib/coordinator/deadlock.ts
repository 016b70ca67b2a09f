// Runs on: the coordinator thread (pure logic over shared views;
// test/find-deadlock.test.ts runs it without threads). Owns: deciding that a session is deadlocked, and saying why.
//
// Every wait in kernbench is `ctl[word] >= target`, published by the waiter
// (ACTOR fields, then STATE, then GEN++) before it parks. The session is
// deadlocked when, across two identical snapshots of every actor's (STATE, GEN):
//   - no actor is RUNNING, at least one is BLOCKED,
//   - no command is in flight in any executor's queue (reserve == head),
//   - and every BLOCKED actor's condition is false.
// Identical generations mean nobody moved between the snapshots, and a blocked
// actor publishes nothing, so no condition can have become true meanwhile:
// nothing can ever make progress. This is exact — no timeout heuristics.
import { ACTOR, ACTOR_STATE, ACTORS_PER_PE, DIRECTIONS, WAIT_KIND } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';
import { commandInFlight } from './snapshot.js';
import type { Machine } from '../topology/machine.js';
import { formatPs } from '../errors.js';
import { summarizeDeadlock } from './deadlock-summary.js';

/** Returns one line per waiter when the session is deadlocked, else null. */
export function findDeadlock(sh: SharedState, m: Machine): string[] | null {
  return findDeadlockReport(sh, m)?.waiters ?? null;
}

/** A deadlock's report: a few lines of summary (./deadlock-summary.ts), and one line per waiter in actor order. */
export interface DeadlockReport {
  summary: string[];
  waiters: string[];
}

/** The deadlock's report when the session is deadlocked, else null. Linear in the actors. */
export function findDeadlockReport(sh: SharedState, m: Machine): DeadlockReport | null {
  if (anyRunning(sh)) return null;
  const L = sh.layout;
  const ctl = sh.ctl;
  const n = L.actors;
  const gen1 = new Int32Array(n);
  const blocked: number[] = [];
  for (let a = 0; a < n; a++) {
    gen1[a] = Atomics.load(ctl, L.actor(a, ACTOR.GEN));
    const s = Atomics.load(ctl, L.actor(a, ACTOR.STATE));
    if (s === ACTOR_STATE.RUNNING) return null;
    if (s === ACTOR_STATE.BLOCKED) blocked.push(a);
  }
  if (blocked.length === 0) return null;
  if (commandInFlight(sh)) return null;
  const lines: string[] = [];
  for (const a of blocked) {
    const word = Atomics.load(ctl, L.actor(a, ACTOR.WAIT_WORD));
    const target = Atomics.load(ctl, L.actor(a, ACTOR.WAIT_TARGET));
    if (Atomics.load(ctl, word) >= target) return null;
    lines.push(describeWait(sh, m, a, target));
  }
  for (let a = 0; a < n; a++) if (Atomics.load(ctl, L.actor(a, ACTOR.GEN)) !== gen1[a]) return null;
  return { summary: summarizeDeadlock(sh, m, blocked), waiters: lines };
}

/**
 * An actor found RUNNING through the active bitmap (the scheduler sets an actor's bit while
 * it is RUNNING or BLOCKED): a word for 32 actors, then only the active ones' states. The
 * scan below reads every actor and stops at the first RUNNING one, which at start-up and
 * teardown (every PE idle, the hosts last) was all of them, every pass (decision 0151).
 * A RUNNING state read here is a fact, so this only ever says "not deadlocked" early; a
 * missed bit falls through to the full scan.
 */
function anyRunning(sh: SharedState): boolean {
  const L = sh.layout;
  const ctl = sh.ctl;
  const active0 = L.activeWord(0);
  const state0 = L.actor(0, ACTOR.STATE);
  const stride = L.actor(1, 0) - L.actor(0, 0);
  for (let wi = 0; wi < L.activeWords; wi++) {
    let bits = Atomics.load(ctl, active0 + wi);
    while (bits !== 0) {
      const low = bits & -bits;
      bits ^= low;
      const a = wi * 32 + (31 - Math.clz32(low));
      if (Atomics.load(ctl, state0 + a * stride) === ACTOR_STATE.RUNNING) return true;
    }
  }
  return false;
}

export function describeActor(sh: SharedState, m: Machine, a: number): string {
  const L = sh.layout;
  const peActors = L.dims.pes * ACTORS_PER_PE;
  if (a >= peActors) {
    const h = a - peActors;
    return h === L.mainHost ? 'main host' : `rank ${h} host`;
  }
  const pe = Math.floor(a / ACTORS_PER_PE);
  const k = a % ACTORS_PER_PE;
  const who = m.describePe(pe);
  if (k === 0) return `${who} kernel`;
  if (k > 2 * 4) return `${who} kernel branch ${k - 1 - 2 * 4} (tl.parallel)`;
  const ch = k - 1;
  return `${who} ${ch < 4 ? 'outbound' : 'inbound'} ${DIRECTIONS[ch % 4]} channel`;
}

/** `east ring`, or `east ring of channel set 2` for a process group's ring (the world's set 0 goes unsaid). */
function ringName(sh: SharedState, ring: number): string {
  const set = sh.layout.setOfRing(ring);
  return `${DIRECTIONS[ring % 4]} ring${set === 0 ? '' : ` of channel set ${set} (a process group's)`}`;
}

export function describeWait(sh: SharedState, m: Machine, a: number, target: number): string {
  const L = sh.layout;
  const kind = Atomics.load(sh.ctl, L.actor(a, ACTOR.WAIT_KIND));
  const aux = Atomics.load(sh.ctl, L.actor(a, ACTOR.WAIT_AUX));
  const at = formatPs(sh.times[L.clock(a)]);
  const who = describeActor(sh, m, a);
  switch (kind) {
    case WAIT_KIND.IPCQ_DATA:
      return `${who} waits for IPCQ data from ${m.describePe(L.senderOfRing(aux))} (its ${ringName(sh, aux)}, message #${target - 1}) since ${at}`;
    case WAIT_KIND.IPCQ_CREDIT:
      return `${who} waits for a credit on its ${ringName(sh, aux)} (the receiver has not freed message #${target - 1}) since ${at}`;
    case WAIT_KIND.KERNEL_DONE:
      return `${who} waits for a kernel on ${m.describePe(aux)} to finish since ${at}`;
    case WAIT_KIND.CHANNEL:
      return `${who} waits for its ${aux < 4 ? 'send to' : 'receive from'} ${DIRECTIONS[aux % 4]} since ${at}`;
    case WAIT_KIND.BARRIER:
      return `${who} waits at barrier #${aux} since ${at}`;
    case WAIT_KIND.RANKS_DONE:
      return `${who} waits for ${aux} spawned rank(s) to finish`;
    case WAIT_KIND.GRANT:
      return aux < 0 ? `${who} waits to run its next launch, ordered by virtual time among its hosts' launches, since ${at}` : `${who} waits for a grant on the memory channel of cube ${aux} since ${at}`;
    case WAIT_KIND.COMMAND:
      return `${who} waits for a free command slot on executor ${aux}`;
    case WAIT_KIND.LINK:
      return `${who} waits for its piece to ${m.describePe(aux)} to cross the shared links since ${at}`;
    default:
      return `${who} waits (kind ${kind}) since ${at}`;
  }
}

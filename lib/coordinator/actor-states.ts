// Runs on: the thread that stops a run — main on a timeout or an interrupt
// (lib/session/watchdog.ts), or the executor whose PE passed the virtual-time
// limit (lib/pe/pe-runtime.ts). Pure reads of shared views, like ./deadlock.ts.
// Owns: the report of a run stopped before it ended: what every active actor
// was doing, summary first (decision 0064's form; decision 0095).
//
// Unlike a deadlock scan this is not a consistent snapshot: the run is being
// stopped, actors may still move while it is read, and each actor's line is
// what that actor last published. A running actor's virtual time is its clock
// as last published (at kernel start, when it last waited, or with shared links
// proved alone when it last sent): a lower bound.
import { ACTOR, ACTOR_STATE, ACTORS_PER_PE, EXEC, HEADER, RING } from '../shm/layout.js';
import { readKernelName, type SharedState } from '../shm/shared-state.js';
import type { Machine } from '../topology/machine.js';
import { formatPs, type ActorStateReport } from '../errors.js';
import { describeActor, describeWait } from './deadlock.js';
import { summarizeDeadlock } from './deadlock-summary.js';

/** Most running actors the summary names one a line; the rest are counted. */
const MAX_RUNNING_LINES = 6;

export interface ActorStates {
  /** A few lines: the running actors (up to MAX_RUNNING_LINES), then the waiters grouped as in a deadlock report. */
  summary: string[];
  /** Every active actor (running or waiting), in actor order. */
  actors: ActorStateReport[];
}

/** What every RUNNING or BLOCKED actor of the session is doing. Linear in the actors. */
export function actorStates(sh: SharedState, m: Machine): ActorStates {
  const L = sh.layout;
  const ctl = sh.ctl;
  const peActors = L.dims.pes * ACTORS_PER_PE;
  const actors: ActorStateReport[] = [];
  const blocked: number[] = [];
  for (let a = 0; a < L.actors; a++) {
    const s = Atomics.load(ctl, L.actor(a, ACTOR.STATE));
    if (s !== ACTOR_STATE.RUNNING && s !== ACTOR_STATE.BLOCKED) continue;
    const who = describeActor(sh, m, a);
    const atPs = sh.times[L.clock(a)];
    const where: Partial<ActorStateReport> = {};
    if (a < peActors) {
      const pe = Math.floor(a / ACTORS_PER_PE);
      const c = m.coord(pe);
      where.pe = { sip: c.sip, cube: c.cube, pe: c.pe };
      const kernel = readKernelName(sh, pe);
      if (kernel !== '') where.kernel = kernel;
    } else if (a - peActors !== L.mainHost) where.rank = a - peActors;
    if (s === ACTOR_STATE.RUNNING) {
      // `PE (...) kernel 'spin' is running`; a channel or branch of that PE names its kernel after.
      const doing = where.kernel === undefined ? `${who} is running` : a % ACTORS_PER_PE === 0 && a < peActors ? `${who} '${where.kernel}' is running` : `${who} is running (kernel '${where.kernel}')`;
      actors.push({ actor: a, who, state: 'running', ...where, atPs, line: `${doing}, virtual time at least ${formatPs(atPs)}` });
    } else {
      const target = Atomics.load(ctl, L.actor(a, ACTOR.WAIT_TARGET));
      const line = describeWait(sh, m, a, target);
      actors.push({ actor: a, who, state: 'waiting', ...where, atPs, waitsFor: line.slice(who.length + 1), line });
      blocked.push(a);
    }
  }
  const running = actors.filter((x) => x.state === 'running');
  const summary = [`${running.length} actor${running.length === 1 ? '' : 's'} running${running.length > 0 ? ':' : ''}`];
  for (const r of running.slice(0, MAX_RUNNING_LINES)) summary.push(`  ${r.line}`);
  if (running.length > MAX_RUNNING_LINES) summary.push(`  and ${running.length - MAX_RUNNING_LINES} more running actor(s)`);
  // The waiters as a deadlock report groups them; its last line (the IPCQ wait cycles) is a deadlock's.
  if (blocked.length > 0) summary.push(...summarizeDeadlock(sh, m, blocked).slice(0, -1));
  else summary.push('no actor waits');
  summary.push(`${messagesSent(sh)} IPCQ messages sent before the stop (every ring's tail): how far the run got`);
  summary.push(...pendingLines(sh, m, blocked));
  return { summary, actors };
}

/**
 * What the arbiters still owe and which waits are already met: a run that stopped with
 * every actor waiting and no deadlock reported was kept from one by these (a waiter whose
 * condition holds bounds both arbiters until its thread resumes it).
 */
function pendingLines(sh: SharedState, m: Machine, blocked: readonly number[]): string[] {
  const L = sh.layout;
  const ctl = sh.ctl;
  const n = (w: number): number => Atomics.load(ctl, w);
  const lines = [`pending: ${n(HEADER.FLOWS_PENDING)} link flows, ${n(HEADER.GRANTS_PENDING)} memory grants, ${n(HEADER.HELD_PENDING)} held pieces, ${n(HEADER.COMMANDS_IN_FLIGHT)} launch commands in flight`];
  // Each executor thread: parked (odd SLEEP_GEN) or not, and its doorbell: a thread parked with a met waiter missed its ring.
  const threads: string[] = [];
  for (let e = 0; e < L.dims.executors; e++) threads.push(`${e}: ${n(L.exec(e, EXEC.SLEEP_GEN)) % 2 === 1 ? 'parked' : 'awake'}, doorbell ${n(L.exec(e, EXEC.DOORBELL))}`);
  lines.push(`executor threads: ${threads.slice(0, 8).join('; ')}${threads.length > 8 ? `; and ${threads.length - 8} more` : ''}`);
  const met = blocked.filter((a) => n(n(L.actor(a, ACTOR.WAIT_WORD))) >= n(L.actor(a, ACTOR.WAIT_TARGET)));
  if (met.length > 0) lines.push(`waits already met, not yet resumed: ${met.slice(0, MAX_RUNNING_LINES).map((a) => describeActor(sh, m, a)).join('; ')}${met.length > MAX_RUNNING_LINES ? `; and ${met.length - MAX_RUNNING_LINES} more` : ''}`);
  return lines;
}

/** The IPCQ messages (pieces) published so far: the sum of every ring's tail, which only goes up. */
function messagesSent(sh: SharedState): number {
  const L = sh.layout;
  let sent = 0;
  for (let r = 0; r < L.rings; r++) sent += Atomics.load(sh.ctl, L.ring(r, RING.TAIL));
  return sent;
}

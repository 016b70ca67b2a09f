// Runs on: executor threads. Owns: tl.parallel's engine — running a kernel's
// branches as flows of their own (actors the deadlock detector sees RUNNING
// while the parent flow waits as IDLE), draining each, and joining their
// clocks — and the rule that each IPCQ direction (send side and receive side
// apart) belongs to the one branch that uses it (docs/determinism.md,
// "Concurrency inside a kernel"). The branches' `tl`s are made by the face
// (./context.ts) and handed in.
import { ACTOR_STATE } from '../shm/layout.js';
import type { Scheduler } from '../sync/scheduler.js';
import type { Flow } from './flow.js';

/** What the engine needs of a branch's `tl`. */
export interface Branch {
  readonly flow: Flow;
  /** The branch returned (drain, then refuse later operations) or failed (refuse them). */
  end(failed: boolean): Promise<void>;
}

/**
 * Run `branches[i]` on `kids[i]`, as concurrent flows of `parent`: resolves with
 * their results (in branch order) once every branch and its transfers are done;
 * `parent`'s clock then moves to the latest branch's end.
 */
export async function runBranches<K extends Branch, T>(sched: Scheduler, parent: Flow, kids: readonly K[], branches: readonly ((tl: K) => Promise<T>)[]): Promise<T[]> {
  // The main flow waits for its branches, which are actors of their own meanwhile. The
  // hand-overs leave no instant in which none of them is active: the deadlock detector
  // and the arbiters' lower bounds (decision 0047) would otherwise see a PE whose flow of
  // control is about to run as one that cannot run.
  parent.begin('parallel');
  for (const k of kids) sched.setState(k.flow.actor, ACTOR_STATE.RUNNING);
  sched.setState(parent.actor, ACTOR_STATE.IDLE);
  let live = kids.length;
  let resumed = false;
  const resume = (): void => {
    if (resumed) return;
    resumed = true;
    sched.setState(parent.actor, ACTOR_STATE.RUNNING);
  };
  try {
    const values = await Promise.all(
      kids.map(async (k, i) => {
        try {
          const v = await branches[i](k);
          await k.end(false);
          return v;
        } catch (e) {
          void k.end(true);
          throw e;
        } finally {
          // The last branch to end makes the main flow RUNNING before it goes idle itself.
          if (--live === 0) resume();
          sched.setState(k.flow.actor, ACTOR_STATE.IDLE);
        }
      }),
    );
    for (const k of kids) parent.clock.advanceTo(k.flow.clock.nowPs);
    return values;
  } finally {
    // Also when a branch failed and the others still run.
    resume();
    parent.end();
  }
}

/**
 * Branch `flow` uses direction `dir` to `use` it: null when the direction is free or
 * already this branch's, else why another branch's use of it is refused.
 */
export function claimDirection(flow: Flow, use: 'send' | 'recv', dir: string): string | null {
  const region = flow.region;
  if (region === null) return null;
  const b = flow.branch;
  const other = region.claim(`${use} ${dir}`, b);
  if (other < 0) return null;
  return `branches ${Math.min(b, other)} and ${Math.max(b, other)} of tl.parallel both ${use} ${dir}: a direction's queue has one writer and one reader, and two branches on it would take turns in wall-clock order; give each branch its own directions, got a second ${use} on '${dir}'`;
}

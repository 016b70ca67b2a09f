// Runs on: every thread that hosts actors. Owns: the bundle of per-thread
// services derived from a SessionPlan (machine, costs, shared views, scheduler).
import { CostModel } from '../topology/cost-model.js';
import { Machine } from '../topology/machine.js';
import type { SharedState } from '../shm/shared-state.js';
import type { SessionPlan } from '../config/plan.js';
import { Jitter } from './jitter.js';
import { setOwnActors } from './owned.js';
import { Scheduler } from './scheduler.js';
import { TraceRecorder } from '../trace/recorder.js';

export interface ThreadStats {
  /** IPCQ messages (slots) this thread published. */
  messages: number;
  /** How this thread's pieces crossed shared links (timing.link_sharing: max_min; lib/ipcq/link-timing.ts). */
  linkPieces: LinkPieces;
  /** `messages` when a piece's check last took a fresh launch horizon (lib/ipcq/link-timing.ts). */
  freshHorizonAt: number;
}

/** Pieces of shared links by how their times were found (docs/decisions/0100-claims-and-a-launch-horizon.md). */
export interface LinkPieces {
  /** Proved alone when sent, timed alone at once. */
  alone: number;
  /** Held, then released to go alone. */
  released: number;
  /** Timed by the link arbiter (every piece with timing.link_fast_path: false). */
  arbitrated: number;
  /** Of those, held first and then handed to the arbiter. */
  handed: number;
}

/** An empty count of link pieces. */
export function noLinkPieces(): LinkPieces {
  return { alone: 0, released: 0, arbitrated: 0, handed: 0 };
}

/** `a` plus `b`, field by field. */
export function addLinkPieces(a: LinkPieces, b: LinkPieces): LinkPieces {
  return { alone: a.alone + b.alone, released: a.released + b.released, arbitrated: a.arbitrated + b.arbitrated, handed: a.handed + b.handed };
}

/** Executor `e` runs more than one PE, and another executor runs some (Scheduler.turnsFirst). */
function turnsFirst(peExecutor: readonly number[], e: number): boolean {
  let mine = 0;
  let others = 0;
  for (const x of peExecutor) {
    if (x === e) mine++;
    else others++;
  }
  return mine > 1 && others > 0;
}

export class ThreadEnv {
  readonly machine: Machine;
  readonly costs: CostModel;
  readonly sched: Scheduler;
  readonly stats: ThreadStats = { messages: 0, linkPieces: noLinkPieces(), freshHorizonAt: 0 };
  /** Set when the run is traced. */
  readonly trace: TraceRecorder | null;
  /**
   * `plan.links === 'claimed'`, read once, and asked by this thread's code in this one way:
   * the plan's strings came through a message, and V8 compares such a string with a literal
   * character by character, where a send asked it every time.
   */
  readonly linksClaimed: boolean;

  constructor(
    readonly plan: SessionPlan,
    readonly shared: SharedState,
    readonly executor: number,
  ) {
    this.machine = new Machine(plan.topology);
    this.costs = new CostModel(this.machine);
    const jitter = plan.jitterSeed === null ? null : new Jitter(plan.jitterSeed, executor);
    this.trace = plan.trace ? new TraceRecorder() : null;
    this.linksClaimed = plan.links === 'claimed';
    this.sched = new Scheduler(shared, executor, plan.ccl.backpressure === 'poll', jitter, turnsFirst(plan.peExecutor, executor));
    setOwnActors(shared, plan.peExecutor, plan.hostExecutor, executor);
  }
}

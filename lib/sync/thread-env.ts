// Runs on: every thread that hosts actors. Owns: the bundle of per-thread
// services derived from a SessionPlan (machine, costs, shared views, scheduler).
import { CostModel } from '../topology/cost-model.js';
import { Machine } from '../topology/machine.js';
import type { SharedState } from '../shm/shared-state.js';
import type { SessionPlan } from '../config/plan.js';
import { Jitter } from './jitter.js';
import { Scheduler } from './scheduler.js';
import { TraceRecorder } from '../trace/recorder.js';

export interface ThreadStats {
  /** IPCQ messages (slots) this thread published. */
  messages: number;
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
  readonly stats: ThreadStats = { messages: 0 };
  /** Set when the run is traced. */
  readonly trace: TraceRecorder | null;

  constructor(
    readonly plan: SessionPlan,
    readonly shared: SharedState,
    readonly executor: number,
  ) {
    this.machine = new Machine(plan.topology);
    this.costs = new CostModel(this.machine);
    const jitter = plan.jitterSeed === null ? null : new Jitter(plan.jitterSeed, executor);
    this.trace = plan.trace ? new TraceRecorder() : null;
    this.sched = new Scheduler(shared, executor, plan.ccl.backpressure === 'poll', jitter, turnsFirst(plan.peExecutor, executor));
  }
}

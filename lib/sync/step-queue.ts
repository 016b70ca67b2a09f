// Runs on: executor threads (the ring steps of collective kernels, lib/ccl/steps.ts).
// Owns: the order in which the yielded ring steps of a thread's ranks take their
// turns when it is not the order they yielded in (decision 0261).
//
// A ring step whose receive landed at once yields before its next step, so that the
// thread's other ranks take theirs. A reaction on a fulfilled promise runs after
// every job already queued: the ranks step in the order they last yielded. On one
// thread that order drifts into a diagonal, ranks up to p / 2 steps apart in virtual
// time, and a boundary wait on several threads starts a wave of parks down the
// thread's block (decision 0155). Ranks one link apart along a ring are one step
// apart in the diagonal, which the links' proofs allow (lib/sync/link-reach.ts); on a
// torus or a mesh, ranks a few links apart are many steps apart, and those proofs
// fail. Where that costs (below: orderedSteps), the steps wait in this queue
// instead: by their flow's virtual clock in quanta of the machine's shortest link
// latency, then by PE, so a thread's ranks stay within about a step of one another
// and a rank usually runs right after the one it receives from.
//
// One job is queued at a time, so a thread's other jobs (a parked receive's
// resumption, a host) still take their turns between two steps. Virtual time does
// not depend on the order: only wall time does.
import { latencyPs } from '../time/virtual-time.js';
import { OwnedContinuation, resolvedUntagged } from './fault-owner.js';
import { machineLinks } from './link-claims.js';
import { linkReach } from './link-reach.js';
import type { ThreadEnv } from './thread-env.js';

/** A fulfilled promise with no owner: each job of the queue is a reaction on it (queueMicrotask wraps every callback in an async resource). */
const RESOLVED = resolvedUntagged(undefined);

/** Quanta from the lowest that keep an order of their own; a step further ahead waits with the last of them. */
const BUCKETS = 8;

/**
 * The steps of one quantum in PE order: they come mostly in that order, so an insertion moves
 * few. Emptied, the arrays keep their length and backing stores (an array cut to length 0
 * drops its store, and the next steps grow a new one).
 */
class Bucket {
  readonly steps: (OwnedContinuation | undefined)[] = [];
  readonly pes: number[] = [];
  head = 0;
  /** One past the last step waiting. */
  tail = 0;

  insert(step: OwnedContinuation, pe: number): void {
    const { steps, pes } = this;
    let i = this.tail++;
    if (i === steps.length) {
      steps.push(step);
      pes.push(pe);
    }
    while (i > this.head && pes[i - 1] > pe) {
      steps[i] = steps[i - 1];
      pes[i] = pes[i - 1];
      i--;
    }
    steps[i] = step;
    pes[i] = pe;
  }

  get empty(): boolean {
    return this.head === this.tail;
  }

  shift(): OwnedContinuation {
    const step = this.steps[this.head] as OwnedContinuation;
    this.steps[this.head++] = undefined;
    if (this.head === this.tail) this.head = this.tail = 0;
    return step;
  }
}

/** A thread's yielded ring steps, lowest quantum first, then lowest PE. */
export class StepQueue {
  private readonly buckets = Array.from({ length: BUCKETS }, () => new Bucket());
  /** The quanta of the lowest and the highest buckets that may hold steps (at most BUCKETS apart). */
  private low = 0;
  private high = 0;
  private size = 0;
  private scheduled = false;
  /** The queue's job, owned by nobody: each step runs as its own owner. */
  private readonly job = new OwnedContinuation(() => this.turn(), () => {});

  /** Give `step` (PE `pe`'s, its flow's clock in quantum `quantum`) its turn after the steps of lower quanta, and of its quantum and lower PEs. */
  push(step: OwnedContinuation, quantum: number, pe: number): void {
    if (this.size === 0) this.low = this.high = quantum;
    else if (quantum < this.low) this.low = Math.max(quantum, this.high - BUCKETS + 1);
    const q = Math.min(Math.max(quantum, this.low), this.low + BUCKETS - 1);
    if (q > this.high) this.high = q;
    this.buckets[q % BUCKETS].insert(step, pe);
    this.size++;
    if (!this.scheduled) {
      this.scheduled = true;
      this.job.after(RESOLVED);
    }
  }

  get length(): number {
    return this.size;
  }

  /** One job: the lowest step goes on (the next job is queued first, behind what its step queues). */
  private turn(): void {
    this.scheduled = false;
    let b = this.buckets[this.low % BUCKETS];
    while (b.empty) b = this.buckets[++this.low % BUCKETS];
    const step = b.shift();
    if (--this.size > 0) {
      this.scheduled = true;
      this.job.after(RESOLVED);
    }
    step.now();
  }
}

/** This thread's queue of yielded ring steps. */
export const stepQueue = new StepQueue();

/**
 * Whether the ring steps of thread `env` take their turns through the step queue,
 * and in what quantum of virtual time (ps; 0: they do not). They do when the thread
 * runs several PEs and other threads run some (a boundary wait would start a wave),
 * or when links are proved alone and some class of links is not a ring (the diagonal
 * fails the proofs). On one thread over rings the order they yielded in costs less
 * (decision 0261).
 */
export function stepQuantumPs(env: ThreadEnv): number {
  let q = quantumOf.get(env);
  if (q === undefined) {
    const m = env.machine;
    const ordered = env.sched.turnsFirst || (env.linksClaimed && !linkReach(m, machineLinks(m)).ringsOnly);
    const cls = m.topology.timing.links;
    const lat = [cls.sip_sip.latency_ns, cls.cube_cube.latency_ns, cls.pe_pe.latency_ns].map(latencyPs).filter((l) => l > 0);
    q = !ordered ? 0 : lat.length === 0 ? 1 : Math.min(...lat);
    quantumOf.set(env, q);
  }
  return q;
}
const quantumOf = new WeakMap<ThreadEnv, number>();

// Runs on: executor threads. Owns: one flow of control of a kernel — its
// virtual clock and the actor it waits as (the transfers it started are
// ./transfers.ts's) — and the rule
// that keeps a kernel deterministic whatever its threads do (docs/determinism.md,
// "Concurrency inside a kernel"):
//
//   A flow has at most one promise-returning tl operation in flight. While one
//   is in flight (returned, not yet settled into the clock), any other tl
//   operation of that flow is ERR_KERNEL_CONCURRENCY, because where it falls
//   relative to the settlement would depend on wall-clock order. Overlap within
//   a flow uses handles (send, recvAsync + wait); concurrent flows are
//   tl.parallel branches, each a Flow of its own with its own clock, owning its
//   IPCQ directions.
//
// "In flight" ends in a microtask queued when the operation settles, so it is
// over before the code that awaited the operation resumes, and a second flow
// that runs in between (the other half of a Promise.all) is caught.
import { thenUntagged } from '../sync/fault-owner.js';
import { VirtualClock } from '../time/virtual-clock.js';

/** What the branches of one tl.parallel share: which branch owns each direction. */
export class Region {
  /** `send <dir>` / `recv <dir>` -> the branch that used it first. */
  private readonly owners = new Map<string, number>();

  constructor(
    /** Virtual time the tl.parallel began (every branch starts there): a refusal that any branch may meet first names this, the same whichever does. */
    readonly startPs = 0,
  ) {}

  /** Claim `use` (e.g. 'send east') for `branch`; returns the other owner, or -1 when it is free or already this branch's. */
  claim(use: string, branch: number): number {
    const owner = this.owners.get(use);
    if (owner === undefined) {
      this.owners.set(use, branch);
      return -1;
    }
    return owner === branch ? -1 : owner;
  }
}

export class Flow {
  /** Promise-returning tl operations returned and not yet settled (see the header). */
  private inFlight = 0;
  /** The operation in flight, for the error. */
  private inFlightOp = '';
  private readonly release = (): void => {
    this.inFlight--;
  };

  constructor(
    /** This flow's virtual time: the PE's clock for a kernel's main flow, its own for a branch. */
    readonly clock: VirtualClock,
    /** The deadlock detector's actor this flow waits as. */
    readonly actor: number,
    /** The tl.parallel region of a branch, null for a kernel's main flow. */
    readonly region: Region | null,
    /** Branch index within its region; -1 for the main flow. */
    readonly branch: number,
  ) {}

  /** A branch starting at `startPs`, its clock under the run's virtual-time limit (`limitPs`). */
  static branch(startPs: number, actor: number, region: Region, index: number, limitPs: number): Flow {
    const clock = new VirtualClock(limitPs);
    clock.advanceTo(startPs);
    return new Flow(clock, actor, region, index);
  }

  /** The operation in flight, or null when a new one may start. */
  busy(): string | null {
    return this.inFlight > 0 ? this.inFlightOp : null;
  }

  /** An operation `op` was returned and has not settled. */
  begin(op: string): void {
    this.inFlight++;
    this.inFlightOp = op;
  }

  /**
   * The operation begun last has settled into the clock: it stops being in
   * flight before its awaiter resumes. A reaction on a settled promise is a
   * microtask queued now, as queueMicrotask's would be, without Node's
   * AsyncResource and bound function per call: those were a fifth of what a
   * ring all-reduce allocated per step (docs/benchmarks.md, "SimGrid side by
   * side").
   */
  end(): void {
    // Untagged: release is bookkeeping, and its promise is never asked for an owner (lib/sync/fault-owner.ts).
    thenUntagged(SETTLED, this.release);
  }

  /**
   * The operation begun last, held in flight past its settlement (a ring step's
   * receive: KernelContext.recvHeld), ends now: the code that awaited it has
   * resumed, which is where end()'s job would have ended it.
   */
  resumed(): void {
    this.inFlight--;
  }
}

const SETTLED = Promise.resolve();

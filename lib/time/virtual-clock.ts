// Runs on: any thread; each instance belongs to one actor (a PE, a DMA channel,
// a host) and is written only by the thread that runs that actor. Owns: the
// one way virtual time moves. A clock starts at 0 and only goes forward:
//   advance(ps)    a local op took `ps` (costs are integers from ./virtual-time.ts)
//   advanceTo(t)   an event happened at `t` (an arrival, a credit, a grant):
//                  the actor continues at max(now, t)
// Every `now = ...` in the simulator goes through one of these two, so no code
// can move an actor's time backwards or by a non-integer amount.
import { KernbenchError } from '../errors.js';
import { ZERO_PS } from './virtual-time.js';

export class VirtualClock {
  /** Picoseconds; a plain field, read on every kernel op. */
  private now = ZERO_PS;

  /**
   * `limitPs`: the run's virtual-time limit (--max-virtual-time): moving past it throws
   * ERR_VIRTUAL_TIME_LIMIT, so a kernel whose time grows without bound stops where its
   * clock advances (one comparison per advance).
   */
  private readonly limitPs: number;

  constructor(limitPs?: number) {
    this.limitPs = limitPs ?? Infinity;
  }

  /** The current virtual time in ps. */
  get nowPs(): number {
    return this.now;
  }

  /** Move forward by `ps` (a non-negative integer: a modelled cost). */
  advance(ps: number): number {
    if (!Number.isSafeInteger(ps) || ps < 0) throw new KernbenchError('ERR_INTERNAL', `a virtual clock advances by a non-negative integer number of ps, got ${ps}`);
    this.now += ps;
    if (this.now > this.limitPs) this.passedLimit();
    return this.now;
  }

  /** Move to `t` if it is later than now (an event at `t`); returns the new time. */
  advanceTo(t: number): number {
    if (t > this.now) {
      if (!Number.isSafeInteger(t)) throw new KernbenchError('ERR_INTERNAL', `virtual times are integer ps, got ${t}`);
      this.now = t;
      if (t > this.limitPs) this.passedLimit();
    }
    return this.now;
  }

  private passedLimit(): never {
    throw new KernbenchError('ERR_VIRTUAL_TIME_LIMIT', `virtual time passed the run's limit of ${this.limitPs / 1000} ns (--max-virtual-time), got ${this.now / 1000} ns`, { atPs: this.now });
  }
}

// Runs on: executor threads. Owns: a PE's request slot at its cube's memory
// arbiter (lib/coordinator/arbiter.ts): writing a request into the PE's GRANT
// words, running an arbiter pass itself when it can (selfGrant), and waiting
// for the grant otherwise. A cube's SRAM and HBM channels are shared by its
// PEs, so an access there is served in virtual-time order; the answer is the
// access's completion time.
//
// A PE has one slot: one request in flight at a time, which is why tl.parallel
// branches may not touch shared cube memory (lib/kernel/context.ts refuses it).
import { Arbiter } from '../coordinator/arbiter.js';
import { GRANT, HEADER, PE, WAIT_KIND } from '../shm/layout.js';
import type { ThreadEnv } from '../sync/thread-env.js';

export class MemoryPort {
  constructor(
    private readonly env: ThreadEnv,
    /** The PE whose slot this is. */
    private readonly pe: number,
  ) {}

  /**
   * Ask for an access of `bytes` to `space` ('sram' | 'hbm') of cube `cube` (global
   * index), requested at `requestedPs` by actor `actor`: null when the requester's
   * own arbiter pass granted it (no thread hop: when no other actor can still ask
   * earlier, a PE alone on its channel, say), else a promise that settles when it is
   * granted (waiting publishes the actor as BLOCKED, which rings the coordinator:
   * requests are pending). Then donePs() is its completion time.
   */
  request(actor: number, requestedPs: number, space: 'sram' | 'hbm', cube: number, bytes: number): Promise<unknown> | null {
    const { env, pe } = this;
    const L = env.shared.layout;
    const times = env.shared.times;
    times[L.grant(pe, GRANT.AT_PS)] = requestedPs;
    times[L.grant(pe, GRANT.BYTES)] = bytes;
    times[L.grant(pe, GRANT.SPACE)] = space === 'hbm' ? 1 : 0;
    times[L.grant(pe, GRANT.CUBE)] = cube;
    Atomics.add(env.shared.ctl, HEADER.GRANTS_PENDING, 1);
    const n = Atomics.add(env.shared.ctl, L.pe(pe, PE.REQ_SEQ), 1) + 1;
    if (!env.sched.jitter && this.selfGrant(actor, n)) return null;
    return env.sched.waitUntil(actor, L.pe(pe, PE.GRANT_SEQ), n, WAIT_KIND.GRANT, cube, requestedPs);
  }

  /** The completion time of the request granted last. */
  donePs(): number {
    return this.env.shared.times[this.env.shared.layout.grant(this.pe, GRANT.DONE_PS)];
  }

  /** Run an arbiter pass for this PE's request `n`, if the lock is free; true when it is granted. Wakes whoever else the pass granted. */
  private selfGrant(actor: number, n: number): boolean {
    const env = this.env;
    const arbiter = Arbiter.of(env.shared, env.machine);
    if (!arbiter.tryLock()) return false;
    let granted: number[];
    try {
      granted = arbiter.pass(actor, this.pe);
    } finally {
      arbiter.unlock();
    }
    const L = env.shared.layout;
    for (const other of granted) if (other !== this.pe) env.sched.publish(L.pe(other, PE.GRANT_SEQ), env.plan.peExecutor[other]);
    return Atomics.load(env.shared.ctl, L.pe(this.pe, PE.GRANT_SEQ)) >= n;
  }
}

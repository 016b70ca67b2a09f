// Runs on: the executor thread a PE is placed on. Owns: a PE's admission of its
// next ordered launch (docs/decisions/0090-launch-order-by-sharing-at-spawn.md).
//
// A PE shared by several hosts (PE.SHARED) must run their launches in
// (virtual time, host, ticket) order, never in the order their commands
// arrived. It may start the launch with the lowest key (t, h) only when no host
// can still post a launch onto it with a lower key: when no actor of the session
// can still act at a virtual time <= t and no command is in flight. That is the
// memory arbiter's condition (decision 0024), so admission is a grant of the same
// arbiter: the PE publishes a request of space GRANT_LAUNCH at t in its GRANT
// block (free: it runs no kernel) and the pass grants it with done = t. Once it
// is granted, every launch with a lower key is in the PE's queue.
import { Arbiter } from '../coordinator/arbiter.js';
import { GRANT, GRANT_LAUNCH, HEADER, PE, WAIT_KIND } from '../shm/layout.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import type { LaunchCommand } from './commands.js';

/** WAIT_KIND.GRANT's aux for an admission (a memory grant's aux is its cube, >= 0). */
export const ADMISSION_AUX = -1;

/** The launch to run first among `cmds` (ordered launches): the lowest (startPs, host, ticket). */
export function firstByKey(cmds: Iterable<LaunchCommand>): LaunchCommand | undefined {
  let best: LaunchCommand | undefined;
  for (const c of cmds) {
    if (!best || c.startPs < best.startPs || (c.startPs === best.startPs && (c.host < best.host || (c.host === best.host && c.seq < best.seq)))) best = c;
  }
  return best;
}

/**
 * Ask to run PE `pe`'s next ordered launch, the earliest at `atPs`, as its kernel
 * actor `actor`. Resolves once granted: then no launch with a lower key can still
 * be posted. Runs an arbiter pass itself first when it can (as a memory request
 * does, lib/kernel/memory-port.ts), and waits for a pass otherwise.
 */
export async function admit(env: ThreadEnv, pe: number, actor: number, atPs: number): Promise<void> {
  const L = env.shared.layout;
  const times = env.shared.times;
  times[L.grant(pe, GRANT.AT_PS)] = atPs;
  times[L.grant(pe, GRANT.BYTES)] = 0;
  times[L.grant(pe, GRANT.SPACE)] = GRANT_LAUNCH;
  times[L.grant(pe, GRANT.CUBE)] = -1;
  Atomics.add(env.shared.ctl, HEADER.GRANTS_PENDING, 1);
  const n = Atomics.add(env.shared.ctl, L.pe(pe, PE.REQ_SEQ), 1) + 1;
  if (!env.sched.jitter && selfGrant(env, pe, actor, n)) return;
  await env.sched.waitUntil(actor, L.pe(pe, PE.GRANT_SEQ), n, WAIT_KIND.GRANT, ADMISSION_AUX, atPs);
}

/** Run an arbiter pass for this PE's request `n`, if the lock is free; true when it is granted. Wakes whoever else the pass granted. */
function selfGrant(env: ThreadEnv, pe: number, actor: number, n: number): boolean {
  const arbiter = Arbiter.of(env.shared, env.machine);
  if (!arbiter.tryLock()) return false;
  let granted: number[];
  try {
    granted = arbiter.pass(actor, pe);
  } finally {
    arbiter.unlock();
  }
  const L = env.shared.layout;
  for (const other of granted) if (other !== pe) env.sched.publish(L.pe(other, PE.GRANT_SEQ), env.plan.peExecutor[other]);
  return Atomics.load(env.shared.ctl, L.pe(pe, PE.GRANT_SEQ)) >= n;
}

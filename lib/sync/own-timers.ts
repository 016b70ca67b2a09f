// Runs on: any thread (executors matter). Owns: Node's own timer functions, taken when
// this module loads, before lib/executor/faults.ts wraps the globals (and node:timers)
// so that a user's timers are tracked by the rank or kernel that scheduled them.
//
// kernbench's own machinery (the scheduler's wake loop, jitter's yields, the clearing of
// a user's timers) schedules with these, so its timers are no actor's: an owner does not
// wait for them at its end, nor cancel them (decision 0096). The wake loop serves every
// actor of its thread; cancelled with the kernel that happened to start it, it stopped
// for good and the thread's next cross-thread wait hung.
import timers from 'node:timers';

export const ownSetImmediate = timers.setImmediate;
export const ownSetTimeout = timers.setTimeout;
export const ownClearTimeout = timers.clearTimeout;
export const ownClearImmediate = timers.clearImmediate;

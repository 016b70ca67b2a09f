// Runs on: main. Owns: how far a running session has got, read from its shared
// memory without disturbing it — the virtual time reached, the IPCQ messages
// sent and the spawned ranks done — for the progress line of a long run.
//
// The counters are read with Atomics.load. Actor clocks are Float64 words, which
// Atomics cannot load: a plain read may see a clock a moment old, which is all a
// progress line needs; nothing read here feeds back into the run.
import { KernbenchError } from '../errors.js';
import { HEADER, RING } from '../shm/layout.js';
import type { Session } from '../session/session.js';

/** How often a running session's progress is read (RunConfig.progress), by default. */
export const PROGRESS_INTERVAL_MS = 500;

/**
 * The progress interval: KERNBENCH_PROGRESS_MS (a positive integer, in ms) or the
 * default. A test sets it short, so that a run shows frames however fast the machine.
 */
export function progressIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.KERNBENCH_PROGRESS_MS;
  if (v === undefined || v === '') return PROGRESS_INTERVAL_MS;
  const ms = Number(v);
  if (!Number.isInteger(ms) || ms < 1) throw new KernbenchError('ERR_INVALID_ENV', `KERNBENCH_PROGRESS_MS must be a positive integer (milliseconds), got '${v}'`);
  return ms;
}

export interface RunProgress {
  /** The furthest virtual time any actor (PE, DMA channel, host) has reached, in ps. */
  virtualPs: number;
  /** IPCQ messages (pieces) published so far, every ring of every channel set. */
  messages: number;
  /** Spawned ranks that have returned or thrown. */
  ranksDone: number;
}

/** `session`'s progress now (its current epoch's buffers). */
export function sessionProgress(session: Session): RunProgress {
  const { ctl, times, layout } = session.shared;
  let virtualPs = 0;
  for (let a = 0; a < layout.actors; a++) virtualPs = Math.max(virtualPs, times[layout.clock(a)]);
  let messages = 0;
  for (let r = 0; r < layout.rings; r++) messages += Atomics.load(ctl, layout.ring(r, RING.TAIL));
  return { virtualPs, messages, ranksDone: Atomics.load(ctl, HEADER.RANKS_SETTLED) };
}

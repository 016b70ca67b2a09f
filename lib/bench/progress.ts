// Runs on: main. Owns: how far a running session has got, read from its shared
// memory without disturbing it — the virtual time reached, the IPCQ messages
// sent and the spawned ranks done — for the progress line of a long run.
//
// The counters are read with Atomics.load. Actor clocks are Float64 words, which
// Atomics cannot load: a plain read may see a clock a moment old, which is all a
// progress line needs; nothing read here feeds back into the run.
import { HEADER, RING } from '../shm/layout.js';
import type { Session } from '../session/session.js';

/** How often a running session's progress is read (RunConfig.progress). */
export const PROGRESS_INTERVAL_MS = 500;

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

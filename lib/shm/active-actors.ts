// Runs on: any thread. Owns: the active-actor bitmap's writes, and the argument for
// its summary. An actor's bit (ShmLayout.activeWord) is set while it is RUNNING or
// BLOCKED and clear while IDLE or DONE; the scheduler flips it after storing the state
// (lib/sync/scheduler.ts), and readers (lib/coordinator/snapshot.ts, deadlock.ts,
// lib/sync/end-bounds.ts) visit only the actors whose bits are set.
//
// A session has one bitmap word for 32 actors, and most words stay zero in a run
// that uses few PEs (13 actors a PE, most of them DMA channels and tl.parallel
// branches): a lone HBM load's arbiter pass read every word, twice. The summary has a
// bit for each bitmap word, set before the word's first bit is ever set and never
// cleared in the session. A reader takes a word whose summary bit it found clear
// as zero: it was zero when the summary was read, which is as if the word had been
// read then, and a reader's correctness never rests on when in its sweep a word is
// read (an actor that turns active during a snapshot is covered by the running actor
// that started it, or by the epoch it bumps; snapshot.ts). Clearing a summary bit when
// its word empties would race with another thread's set of a bit in the same word
// (words straddle threads' actors), so bits stay: a run that has used every actor reads
// one more word a 32 words than before.
import type { ShmLayout } from './layout.js';

/** Set (active) or clear actor `actor`'s bit in the active-actor bitmap, the word's summary bit first. */
export function markActive(ctl: Int32Array, L: ShmLayout, actor: number, active: boolean): void {
  const bit = 1 << (actor & 31);
  if (!active) {
    Atomics.and(ctl, L.activeWord(actor), ~bit);
    return;
  }
  const wi = actor >>> 5;
  const sw = L.activeSummaryWord(wi);
  const sbit = 1 << (wi & 31);
  // Set once a session: a load is enough after that (bits are never cleared).
  if ((Atomics.load(ctl, sw) & sbit) === 0) Atomics.or(ctl, sw, sbit);
  Atomics.or(ctl, L.activeWord(actor), bit);
}

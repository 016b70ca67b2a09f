// Runs on: executor threads (an outbound channel's request to the link arbiter) and the
// thread running a link arbiter pass (the coordinator). Owns: the flow-request bitmap, by
// which a pass finds the channels with a new request without reading every channel's
// PE.FLOW_REQ word (docs/decisions/0274-the-link-arbiter-reads-only-the-channels-that-asked.md).
//
// A channel bumps its FLOW_REQ word, then sets its bit (ShmLayout.flowReqWord), then its
// word's summary bit (flowReqSummaryWord), and only then waits for the answer (a state
// change, which moves the state epoch). A pass takes the summary's words with an atomic
// exchange, then each word they name the same way, and keeps the channels it took as
// candidates until their request has been added to the model; whether a candidate has
// a request not yet added is still its FLOW_REQ word against the arbiter's count, read
// inside the pass's epoch snapshot as before. Nothing is lost: a bit set after its word
// was taken stays for the next pass, and so does a summary bit set after the summary was
// taken (its word's bit was set before it, so a pass that takes that summary bit finds
// the word's bit, or an earlier pass took it). A request published while a snapshot is
// taken moves the epoch when its channel waits, and the snapshot is taken again, taking
// the bits again: so a snapshot sees every request the full scan of FLOW_REQ words saw.
import type { ShmLayout } from './layout.js';

/** After outbound channel `c` (pe * 4 + dir) bumped its FLOW_REQ word: mark it for the link arbiter, its bit before its word's summary bit. */
export function markFlowRequest(ctl: Int32Array, L: ShmLayout, c: number): void {
  Atomics.or(ctl, L.flowReqWord(c), 1 << (c & 31));
  const wi = c >>> 5;
  Atomics.or(ctl, L.flowReqSummaryWord(wi), 1 << (wi & 31));
}

/** The arbiter's side: the channels it took from the bitmap and has not yet seen added. */
export class FlowRequestTaker {
  private readonly taken: Uint8Array;
  private list: number[] = [];

  constructor(channels: number) {
    this.taken = new Uint8Array(channels);
  }

  /** Take every marked channel into the candidates (each once). */
  take(ctl: Int32Array, L: ShmLayout): void {
    const summary0 = L.flowReqSummaryWord(0);
    for (let si = 0; si < L.flowReqSummaryWords; si++) {
      let words = Atomics.load(ctl, summary0 + si) === 0 ? 0 : Atomics.exchange(ctl, summary0 + si, 0);
      while (words !== 0) {
        const lowWord = words & -words;
        words ^= lowWord;
        const wi = si * 32 + (31 - Math.clz32(lowWord));
        let bits = Atomics.exchange(ctl, L.flowReqWord(wi * 32), 0);
        while (bits !== 0) {
          const low = bits & -bits;
          bits ^= low;
          const c = wi * 32 + (31 - Math.clz32(low));
          if (this.taken[c] === 0) {
            this.taken[c] = 1;
            this.list.push(c);
          }
        }
      }
    }
  }

  /** The candidates in channel order. */
  candidates(): readonly number[] {
    if (this.list.length > 1) this.list.sort((a, b) => a - b);
    return this.list;
  }

  /** Keep only the candidates `pending` still says have a request not yet added. */
  keep(pending: (c: number) => boolean): void {
    const kept: number[] = [];
    for (const c of this.list) {
      if (pending(c)) kept.push(c);
      else this.taken[c] = 0;
    }
    this.list = kept;
  }
}

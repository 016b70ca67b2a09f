// Runs on: every thread that hosts actors, when a run records events (--trace,
// --stats, --log, --json; lib/bench/runner.ts sets plan.trace for any of them).
// Owns: recording what happened in virtual time — op and kernel spans per PE,
// every IPCQ piece on both of its ends with the virtual time its operation
// waited (for a credit, for data), host spans and barrier arrivals — as compact
// records returned to main at session end. Nothing crosses threads while the
// session runs. Main turns them into the Chrome trace (./chrome.ts), the
// backpressure statistics (./stats.ts) and the event log (./event-log.ts).
//
// Every number recorded is a virtual time or a size computed by the run itself,
// so the records are the same under every thread layout; only their order in
// the arrays (which thread, which wall-clock interleaving) differs, and every
// consumer sorts by a key of recorded values.

/** [track, name, startPs, endPs]; track >= 0 is a PE id, track < 0 is host -1 - h. */
export type SpanRecord = [track: number, name: string, startPs: number, endPs: number];

/** A kernel on a PE: its launch sequence number on that PE, its name, start and end. */
export type KernelRecord = [pe: number, seq: number, name: string, startPs: number, endPs: number];

/**
 * One IPCQ piece leaving its sender PE `pe` in direction `dir` for `peer`. `readyPs`: when the outbound channel could
 * have started it (its clock, the send's issue time); `creditWaitPs`: how much
 * later its credit let it start (0 when the credit was back in time); `sentPs`:
 * when its last byte left the link; `first`: 1 on a payload's first piece.
 */
export type SendRecord = [ring: number, seq: number, pe: number, dir: string, peer: number, bytes: number, readyPs: number, creditWaitPs: number, sentPs: number, arrivalPs: number, first: number];

/**
 * The same piece consumed by `pe` from `peer`. `dir`: the receiver's inbound direction; `readyPs`:
 * when the inbound channel could have read it; `dataWaitPs`: how much later it
 * arrived (0 when it was in already); `freedPs`: when its slot was freed.
 */
export type RecvRecord = [ring: number, seq: number, pe: number, dir: string, peer: number, bytes: number, readyPs: number, dataWaitPs: number, freedPs: number];

/** A host's arrival at barrier `round` of the spawn whose barriers start after `base` arrivals; `leftPs` = the latest arrival. */
export type BarrierRecord = [base: number, round: number, host: number, arrivedPs: number, leftPs: number];

export interface ThreadTraceData {
  spans: SpanRecord[];
  kernels: KernelRecord[];
  sends: SendRecord[];
  recvs: RecvRecord[];
  barriers: BarrierRecord[];
}

export function emptyTraceData(): ThreadTraceData {
  return { spans: [], kernels: [], sends: [], recvs: [], barriers: [] };
}

export class TraceRecorder {
  readonly data: ThreadTraceData = emptyTraceData();

  span(track: number, name: string, startPs: number, endPs: number): void {
    this.data.spans.push([track, name, startPs, endPs]);
  }

  /** A kernel's span on its PE (also a span of the trace). */
  kernel(pe: number, seq: number, name: string, startPs: number, endPs: number): void {
    this.data.spans.push([pe, name, startPs, endPs]);
    this.data.kernels.push([pe, seq, name, startPs, endPs]);
  }

  hostSpan(host: number, name: string, startPs: number, endPs: number): void {
    this.data.spans.push([-1 - host, name, startPs, endPs]);
  }

  /** An IPCQ piece leaves `pe` (see SendRecord). */
  pieceOut(ring: number, seq: number, pe: number, dir: string, peer: number, bytes: number, readyPs: number, creditWaitPs: number, sentPs: number, arrivalPs: number, first: boolean): void {
    this.data.sends.push([ring, seq, pe, dir, peer, bytes, readyPs, creditWaitPs, sentPs, arrivalPs, first ? 1 : 0]);
  }

  /** The same piece is consumed by `pe` (see RecvRecord). */
  pieceIn(ring: number, seq: number, pe: number, dir: string, peer: number, bytes: number, readyPs: number, dataWaitPs: number, freedPs: number): void {
    this.data.recvs.push([ring, seq, pe, dir, peer, bytes, readyPs, dataWaitPs, freedPs]);
  }

  barrier(base: number, round: number, host: number, arrivedPs: number, leftPs: number): void {
    this.data.barriers.push([base, round, host, arrivedPs, leftPs]);
  }
}

/** Every thread's records as one (order within the arrays is not meaningful; consumers sort). */
export function mergeTraceData(parts: ThreadTraceData[]): ThreadTraceData {
  const all = emptyTraceData();
  // One push per record: spreading a long array into push() overflows the stack.
  const append = <T>(to: T[], from: T[]): void => {
    for (const x of from) to.push(x);
  };
  for (const p of parts) {
    append(all.spans, p.spans);
    append(all.kernels, p.kernels);
    append(all.sends, p.sends);
    append(all.recvs, p.recvs);
    append(all.barriers, p.barriers);
  }
  return all;
}

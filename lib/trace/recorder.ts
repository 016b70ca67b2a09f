// Runs on: every thread that hosts actors, when a run is traced (--trace).
// Owns: recording what happened in virtual time — op spans per PE, IPCQ
// pieces as flow arrows from sender to receiver, host spans per rank — as
// compact records returned to main at session end (lib/trace/chrome.ts turns
// them into Chrome trace events).

/** [track, name, startPs, endPs]; track >= 0 is a PE id, track < 0 is host -1 - h. */
export type SpanRecord = [number, string, number, number];
/** [flowId, fromPe, atPs, toPe, atPs]: one IPCQ piece from departure to consumption. */
export type FlowHalf = [string, number, number];

export interface ThreadTraceData {
  spans: SpanRecord[];
  /** Flow starts and ends keyed by "ring:seq"; main pairs them. */
  flowStarts: FlowHalf[];
  flowEnds: FlowHalf[];
}

export class TraceRecorder {
  readonly data: ThreadTraceData = { spans: [], flowStarts: [], flowEnds: [] };

  span(track: number, name: string, startPs: number, endPs: number): void {
    this.data.spans.push([track, name, startPs, endPs]);
  }

  hostSpan(host: number, name: string, startPs: number, endPs: number): void {
    this.data.spans.push([-1 - host, name, startPs, endPs]);
  }

  /** An IPCQ piece leaves `pe` at `atPs`. */
  flowOut(ring: number, seq: number, pe: number, atPs: number): void {
    this.data.flowStarts.push([`${ring}:${seq}`, pe, atPs]);
  }

  /** The same piece is consumed by `pe` at `atPs`. */
  flowIn(ring: number, seq: number, pe: number, atPs: number): void {
    this.data.flowEnds.push([`${ring}:${seq}`, pe, atPs]);
  }
}

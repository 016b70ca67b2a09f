// Runs on: main. Owns: the event log printed by --log (SimGrid style, one line
// per IPCQ piece and per kernel start and end, in virtual-time order):
//
//   [t=0ps] (pe0@sip0) start all_reduce
//   [t=150476ps] (pe0@sip0) send east #0 64B to pe16@sip1
//   [t=870518ps] (pe16@sip1) recv west #0 64B from pe0@sip0 (waited 720042ps for data)
//   [t=1741703ps] (pe0@sip0) end all_reduce
//
// A send is logged when the piece's last byte left the link, a receive when its
// slot was freed (arrival + staging read), as in the trace (docs/trace.md).
// `#n` is the piece's number on its ring. "waited" is virtual time: how much
// later than its channel was ready the piece's credit came back (send) or the
// piece arrived (recv); it is left out when 0.
//
// Order: (time, PE, kernel, phase, direction name, ring, number). `kernel` is
// the launch sequence number of the PE's kernel the event belongs to (a piece
// belongs to the first kernel of its PE that had not ended before it); phases
// are start < recv < send < end. So at one instant a kernel starts before its
// pieces, its last receive comes before its end, and a kernel that ends when
// the next one starts ends first. Every key is a recorded value, never a
// thread's recording order: the log is the same under every --threads layout
// and under jitter.
import type { Machine } from '../topology/machine.js';
import type { ThreadTraceData } from './recorder.js';

const PHASE = { start: 0, recv: 1, send: 2, end: 3 } as const;

/** Code-unit order (never locale order: it is the same on every machine). */
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

interface LogEvent {
  t: number;
  pe: number;
  kernel: number;
  phase: number;
  dir: string;
  ring: number;
  seq: number;
  text: string;
}

/** The log lines of one session's records (every thread's, merged). */
export function eventLog(data: ThreadTraceData, m: Machine): string[] {
  const at = (pe: number): string => `pe${pe}@sip${m.coord(pe).sip}`;
  const waited = (ps: number, what: string): string => (ps > 0 ? ` (waited ${ps}ps for ${what})` : '');
  const events: LogEvent[] = [];
  const kernelsOf = new Map<number, [seq: number, endPs: number][]>();
  for (const [pe, seq, name, startPs, endPs] of data.kernels) {
    events.push({ t: startPs, pe, kernel: seq, phase: PHASE.start, dir: '', ring: 0, seq, text: `start ${name}` });
    events.push({ t: endPs, pe, kernel: seq, phase: PHASE.end, dir: '', ring: 0, seq, text: `end ${name}` });
    let l = kernelsOf.get(pe);
    if (!l) kernelsOf.set(pe, (l = []));
    l.push([seq, endPs]);
  }
  for (const l of kernelsOf.values()) l.sort((a, b) => a[0] - b[0]);
  /** The launch number of the first kernel of `pe` not ended before `t` (a PE runs its kernels one after another). */
  const kernelAt = (pe: number, t: number): number => {
    const l = kernelsOf.get(pe) ?? [];
    let lo = 0;
    let hi = l.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (l[mid][1] < t) lo = mid + 1;
      else hi = mid;
    }
    return lo < l.length ? l[lo][0] : Number.MAX_SAFE_INTEGER;
  };
  for (const [ring, seq, pe, dir, peer, bytes, , creditWaitPs, sentPs] of data.sends) {
    events.push({ t: sentPs, pe, kernel: kernelAt(pe, sentPs), phase: PHASE.send, dir, ring, seq, text: `send ${dir} #${seq} ${bytes}B to ${at(peer)}${waited(creditWaitPs, 'credit')}` });
  }
  for (const [ring, seq, pe, dir, peer, bytes, , dataWaitPs, freedPs] of data.recvs) {
    events.push({ t: freedPs, pe, kernel: kernelAt(pe, freedPs), phase: PHASE.recv, dir, ring, seq, text: `recv ${dir} #${seq} ${bytes}B from ${at(peer)}${waited(dataWaitPs, 'data')}` });
  }
  events.sort((a, b) => a.t - b.t || a.pe - b.pe || a.kernel - b.kernel || a.phase - b.phase || cmp(a.dir, b.dir) || a.ring - b.ring || a.seq - b.seq);
  return events.map((e) => `[t=${e.t}ps] (${at(e.pe)}) ${e.text}`);
}

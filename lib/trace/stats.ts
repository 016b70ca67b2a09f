// Runs on: main. Owns: the backpressure statistics of a run (--stats, --json;
// docs/backpressure.md) — per IPCQ ring its traffic, the virtual time its
// sender waited for credits and its receiver for data, and its peak occupancy;
// per host barrier its arrivals and their spread — computed from the records
// every thread returned at session end (./recorder.ts).
//
// Everything here is a function of virtual times and sizes, and rows are sorted
// by ring id and barrier key, so the statistics are the same under every thread
// layout and under jitter. Recording them changes nothing the run computes.
import type { Machine } from '../topology/machine.js';
import type { ThreadTraceData } from './recorder.js';

export interface RingStats {
  /** Ring id: sender PE * 4 + direction (docs/ipcq.md). */
  ring: number;
  /** Sender and receiver PE ids, and their SIPs. */
  from: number;
  to: number;
  fromSip: number;
  toSip: number;
  /** The sender's direction. */
  dir: string;
  /** Payloads sent (tl.send / a collective's step). */
  messages: number;
  /** Slots used: a payload larger than vc_chunk_size is cut into several. */
  pieces: number;
  bytes: number;
  /** Pieces whose credit came back after the outbound channel was ready to send them, and the virtual time lost. */
  creditWaits: number;
  creditWaitPs: number;
  /** Pieces that arrived after the inbound channel was ready to read them, and the virtual time lost. */
  dataWaits: number;
  dataWaitPs: number;
  /** Max over virtual time of pieces sent (last byte left) and not yet freed by the receiver. */
  peakOccupancy: number;
}

export interface BarrierStats {
  /** Barriers in order: by the spawn they belong to, then round. */
  index: number;
  arrivals: number;
  /** Latest minus earliest arrival, virtual ps. */
  spreadPs: number;
}

export interface RunStats {
  rings: RingStats[];
  barriers: BarrierStats[];
  /** Sums over the rings (peakOccupancy: the max). */
  total: Omit<RingStats, 'ring' | 'from' | 'to' | 'fromSip' | 'toSip' | 'dir'>;
}

const ns = (ps: number): number => ps / 1000;

/** The statistics of one session's records (`data`: every thread's, merged). */
export function runStats(data: ThreadTraceData, m: Machine): RunStats {
  const rings = new Map<number, RingStats & { events: [number, number][] }>();
  const ring = (id: number, from: number, to: number): RingStats & { events: [number, number][] } => {
    let r = rings.get(id);
    if (!r) {
      r = { ring: id, from, to, fromSip: m.coord(from).sip, toSip: m.coord(to).sip, dir: '', messages: 0, pieces: 0, bytes: 0, creditWaits: 0, creditWaitPs: 0, dataWaits: 0, dataWaitPs: 0, peakOccupancy: 0, events: [] };
      rings.set(id, r);
    }
    return r;
  };
  for (const [id, , from, dir, to, bytes, , creditWaitPs, sentPs, , first] of data.sends) {
    const r = ring(id, from, to);
    r.dir = dir;
    r.messages += first;
    r.pieces++;
    r.bytes += bytes;
    if (creditWaitPs > 0) {
      r.creditWaits++;
      r.creditWaitPs += creditWaitPs;
    }
    r.events.push([sentPs, +1]);
  }
  for (const [id, , to, , from, , , dataWaitPs, freedPs] of data.recvs) {
    const r = ring(id, from, to);
    if (dataWaitPs > 0) {
      r.dataWaits++;
      r.dataWaitPs += dataWaitPs;
    }
    r.events.push([freedPs, -1]);
  }
  const out: RingStats[] = [];
  for (const r of [...rings.values()].sort((a, b) => a.ring - b.ring)) {
    // Occupancy is over [sent, freed): at one instant, frees count before sends.
    r.events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    for (const [, d] of r.events) r.peakOccupancy = Math.max(r.peakOccupancy, (now += d));
    const { events, ...row } = r;
    void events;
    out.push(row);
  }
  return { rings: out, barriers: barrierStats(data), total: totalOf(out) };
}

function barrierStats(data: ThreadTraceData): BarrierStats[] {
  const byKey = new Map<string, { base: number; round: number; min: number; max: number; arrivals: number }>();
  for (const [base, round, , arrivedPs] of data.barriers) {
    const key = `${base}:${round}`;
    const b = byKey.get(key) ?? { base, round, min: Infinity, max: -Infinity, arrivals: 0 };
    b.min = Math.min(b.min, arrivedPs);
    b.max = Math.max(b.max, arrivedPs);
    b.arrivals++;
    byKey.set(key, b);
  }
  return [...byKey.values()].sort((a, b) => a.base - b.base || a.round - b.round).map((b, index) => ({ index, arrivals: b.arrivals, spreadPs: b.max - b.min }));
}

/** Add `r`'s counts into `t` (counts and times sum; the peak is the larger). */
function addCounts(t: RunStats['total'], r: RunStats['total']): void {
  t.messages += r.messages;
  t.pieces += r.pieces;
  t.bytes += r.bytes;
  t.creditWaits += r.creditWaits;
  t.creditWaitPs += r.creditWaitPs;
  t.dataWaits += r.dataWaits;
  t.dataWaitPs += r.dataWaitPs;
  t.peakOccupancy = Math.max(t.peakOccupancy, r.peakOccupancy);
}

function totalOf(rings: RingStats[]): RunStats['total'] {
  const t: RunStats['total'] = { messages: 0, pieces: 0, bytes: 0, creditWaits: 0, creditWaitPs: 0, dataWaits: 0, dataWaitPs: 0, peakOccupancy: 0 };
  for (const r of rings) addCounts(t, r);
  return t;
}

/** Several sessions' statistics as one (a bench that opens several sessions): rings summed by id, barriers in session order. */
export function sumStats(parts: RunStats[]): RunStats {
  const rings = new Map<number, RingStats>();
  const barriers: BarrierStats[] = [];
  for (const p of parts) {
    for (const r of p.rings) {
      const s = rings.get(r.ring);
      if (!s) rings.set(r.ring, { ...r });
      else addCounts(s, r);
    }
    for (const b of p.barriers) barriers.push({ ...b, index: barriers.length });
  }
  const out = [...rings.values()].sort((a, b) => a.ring - b.ring);
  return { rings: out, barriers, total: totalOf(out) };
}

/** The --stats table, one line per row. */
export function statsTable(s: RunStats): string[] {
  const head = ['ring', 'from', 'to', 'dir', 'msgs', 'pieces', 'bytes', 'credit waits', 'credit wait ns', 'data waits', 'data wait ns', 'peak'];
  // Times are summed in ps (exact integers) and shown in ns.
  const f3 = (ps: number): string => ns(ps).toFixed(3);
  const rows = s.rings.map((r) => [String(r.ring), `pe${r.from}@sip${r.fromSip}`, `pe${r.to}@sip${r.toSip}`, r.dir, String(r.messages), String(r.pieces), String(r.bytes), String(r.creditWaits), f3(r.creditWaitPs), String(r.dataWaits), f3(r.dataWaitPs), String(r.peakOccupancy)]);
  const t = s.total;
  rows.push(['total', '', '', '', String(t.messages), String(t.pieces), String(t.bytes), String(t.creditWaits), f3(t.creditWaitPs), String(t.dataWaits), f3(t.dataWaitPs), String(t.peakOccupancy)]);
  const lines = ['IPCQ rings (virtual time; peak = most pieces sent and not yet freed):', ...columns([head, ...rows], 3)];
  if (s.barriers.length > 0) {
    lines.push('barriers:');
    lines.push(...columns([['barrier', 'arrivals', 'spread ns'], ...s.barriers.map((b) => [String(b.index), String(b.arrivals), f3(b.spreadPs)])], 0));
  }
  return lines;
}

/** Columns 1..`textColumns` are text (left-aligned), the others numbers. */
function columns(cells: string[][], textColumns: number): string[] {
  const widths = cells[0].map((_, c) => Math.max(...cells.map((r) => r[c].length)));
  return cells.map((r) => `  ${r.map((x, c) => (c >= 1 && c <= textColumns ? x.padEnd(widths[c]) : x.padStart(widths[c]))).join('  ')}`.trimEnd());
}

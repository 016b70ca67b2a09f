// Runs on: main. Owns: the Chrome trace-event file written by --trace
// (docs/trace.md) — one process per SIP with one track per PE and one per DMA
// channel that sent or waited (its pieces' sends and its waits as spans), a "hosts" process with one track per rank (and main),
// spans in virtual time (1 µs of trace = 1 µs simulated), IPCQ pieces as flow
// arrows with numeric ids, credit and receive waits as spans, a counter track
// per ring for its occupancy, and barrier spans. Opens in Perfetto
// (ui.perfetto.dev) and chrome://tracing. Events are sorted by keys of recorded
// values, so the file is as deterministic as the run.
import { writeFileSync } from 'node:fs';
import type { Machine } from '../topology/machine.js';
import { mergeTraceData, type ThreadTraceData } from './recorder.js';

export interface ChromeEvent {
  name: string;
  ph: 'X' | 's' | 'f' | 'M' | 'C';
  pid: number;
  tid: number;
  ts?: number;
  dur?: number;
  id?: number;
  bp?: 'e';
  cat?: string;
  args?: Record<string, unknown>;
}

export const HOSTS_PID = 1_000_000;
/** Channel tracks (the DMA channels that sent or waited): tid = CHANNEL_TID + their rank in (PE, out before in, direction) order. */
export const CHANNEL_TID = 1_000_000;
const us = (ps: number): number => ps / 1e6;
/** Code-unit order (never locale order: the file is the same on every machine). */
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function chromeTrace(parts: ThreadTraceData[], m: Machine, hostNames: string[]): { traceEvents: ChromeEvent[]; displayTimeUnit: 'ns' } {
  const data = mergeTraceData(parts);
  const events: ChromeEvent[] = [];
  const where = (track: number): { pid: number; tid: number } => (track >= 0 ? { pid: m.coord(track).sip, tid: track } : { pid: HOSTS_PID, tid: -1 - track });
  const tracks = new Set<number>();
  // A channel track's key: "pe|0 out or 1 in|direction"; its tid is assigned once all are known.
  const channelKey = (pe: number, inbound: boolean, dir: string): string => `${pe}|${inbound ? 1 : 0}|${dir}`;
  const waits: { key: string; event: ChromeEvent }[] = [];
  for (const [track, name, start, end] of data.spans) {
    tracks.add(track);
    events.push({ name, ph: 'X', cat: track >= 0 ? 'pe' : 'host', ...where(track), ts: us(start), dur: us(end - start) });
  }
  for (const [base, round, host, arrivedPs, leftPs] of data.barriers) {
    tracks.add(-1 - host);
    events.push({ name: 'barrier', ph: 'X', cat: 'barrier', ...where(-1 - host), ts: us(arrivedPs), dur: us(leftPs - arrivedPs), args: { spawnBase: base, round } });
  }

  // Waits and sends, on the channel that waited or sent (a channel runs its pieces one at a
  // time, so they never overlap there). A send spans a piece from when its credit let the
  // channel start it to its last byte out: the communication that overlaps a PE's GEMM.
  for (const [ring, seq, pe, dir, peer, bytes, readyPs, creditWaitPs, sentPs] of data.sends) {
    if (creditWaitPs > 0) waits.push({ key: channelKey(pe, false, dir), event: { name: 'credit wait', ph: 'X', cat: 'ipcq', pid: m.coord(pe).sip, tid: 0, ts: us(readyPs), dur: us(creditWaitPs), args: { ring, seq } } });
    waits.push({ key: channelKey(pe, false, dir), event: { name: 'send', ph: 'X', cat: 'ipcq', pid: m.coord(pe).sip, tid: 0, ts: us(readyPs + creditWaitPs), dur: us(sentPs - readyPs - creditWaitPs), args: { ring, seq, bytes, to: peer } } });
  }
  for (const [ring, seq, pe, dir, , , readyPs, dataWaitPs] of data.recvs) {
    if (dataWaitPs > 0) waits.push({ key: channelKey(pe, true, dir), event: { name: 'recv wait', ph: 'X', cat: 'ipcq', pid: m.coord(pe).sip, tid: 0, ts: us(readyPs), dur: us(dataWaitPs), args: { ring, seq } } });
  }
  const channelKeys = [...new Set(waits.map((w) => w.key))].sort((a, b) => {
    const [pa, ia, da] = a.split('|');
    const [pb, ib, db] = b.split('|');
    return Number(pa) - Number(pb) || Number(ia) - Number(ib) || (da < db ? -1 : da > db ? 1 : 0);
  });
  const channelTid = new Map(channelKeys.map((k, i) => [k, CHANNEL_TID + i]));
  for (const w of waits) events.push({ ...w.event, tid: channelTid.get(w.key) as number });

  // Flows: one per piece that was consumed, numbered in (departure, ring, seq) order.
  const freed = new Map<string, [number, number]>();
  for (const [ring, seq, pe, , , , , , freedPs] of data.recvs) freed.set(`${ring}:${seq}`, [pe, freedPs]);
  const flows = data.sends
    .map(([ring, seq, pe, , , bytes, , , sentPs]) => ({ ring, seq, pe, bytes, sentPs, end: freed.get(`${ring}:${seq}`) }))
    .filter((f) => f.end !== undefined) // a piece never consumed (the run stopped early)
    .sort((a, b) => a.sentPs - b.sentPs || a.ring - b.ring || a.seq - b.seq);
  flows.forEach((f, i) => {
    const [to, freedPs] = f.end as [number, number];
    events.push({ name: 'ipcq', ph: 's', cat: 'ipcq', id: i + 1, ...where(f.pe), ts: us(f.sentPs), args: { ring: f.ring, seq: f.seq, bytes: f.bytes } });
    events.push({ name: 'ipcq', ph: 'f', bp: 'e', cat: 'ipcq', id: i + 1, ...where(to), ts: us(freedPs) });
  });

  // Occupancy per ring: pieces sent and not yet freed, over [sent, freed) (docs/backpressure.md).
  const deltas = new Map<number, { from: number; dir: string; l: [number, number][] }>();
  for (const [ring, , from, dir, , , , , sentPs] of data.sends) {
    let r = deltas.get(ring);
    if (!r) deltas.set(ring, (r = { from, dir, l: [] }));
    r.l.push([sentPs, +1]);
  }
  for (const [ring, , , , , , , , freedPs] of data.recvs) deltas.get(ring)?.l.push([freedPs, -1]);
  for (const [ring, { from, dir, l }] of deltas) {
    l.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    for (let i = 0; i < l.length; i++) {
      now += l[i][1];
      if (i + 1 < l.length && l[i + 1][0] === l[i][0]) continue; // one sample per instant: its value after every change then
      events.push({ name: `ring ${ring} ${dir} occupancy`, ph: 'C', cat: 'ipcq', pid: m.coord(from).sip, tid: from, ts: us(l[i][0]), args: { pieces: now } });
    }
  }

  // At one instant on one track, a longer span first: it encloses the shorter ones that start with it.
  events.sort((a, b) => (a.ts ?? 0) - (b.ts ?? 0) || a.pid - b.pid || a.tid - b.tid || cmp(a.ph, b.ph) || (b.dur ?? 0) - (a.dur ?? 0) || cmp(a.name, b.name) || (a.id ?? 0) - (b.id ?? 0));
  const meta: ChromeEvent[] = [];
  const sips = new Set<number>();
  for (const track of [...tracks].sort((a, b) => a - b)) {
    const w = where(track);
    if (track >= 0) {
      const c = m.coord(track);
      sips.add(c.sip);
      meta.push({ name: 'thread_name', ph: 'M', ...w, args: { name: `PE ${track} (cube ${c.cube}, pe ${c.pe})` } });
    } else {
      meta.push({ name: 'thread_name', ph: 'M', ...w, args: { name: hostNames[-1 - track] ?? `host ${-1 - track}` } });
    }
  }
  for (const key of channelKeys) {
    const [pe, inbound, dir] = key.split('|');
    const sip = m.coord(Number(pe)).sip;
    sips.add(sip);
    meta.push({ name: 'thread_name', ph: 'M', pid: sip, tid: channelTid.get(key) as number, args: { name: `DMA PE ${pe} ${inbound === '1' ? 'in' : 'out'} ${dir}` } });
  }
  for (const sip of [...sips].sort((a, b) => a - b)) meta.push({ name: 'process_name', ph: 'M', pid: sip, tid: 0, args: { name: `SIP ${sip}` } });
  meta.push({ name: 'process_name', ph: 'M', pid: HOSTS_PID, tid: 0, args: { name: 'hosts' } });
  return { traceEvents: [...meta, ...events], displayTimeUnit: 'ns' };
}

/**
 * Write the trace to `file`. `otherData` is the trace's metadata (the format's
 * top-level `otherData` object: the kernbench version that wrote it, ...).
 */
export function writeChromeTrace(file: string, parts: ThreadTraceData[], m: Machine, hostNames: string[], otherData: Record<string, string> = {}): void {
  writeFileSync(file, `${JSON.stringify({ ...chromeTrace(parts, m, hostNames), otherData })}\n`);
}

// Runs on: main. Owns: the Chrome trace-event file written by --trace — one
// process per SIP with one track per PE, a "hosts" process with one track per
// rank (and main), op spans in virtual time (1 µs of trace = 1 µs simulated),
// and IPCQ pieces as flow arrows. Opens in Perfetto (ui.perfetto.dev) and
// chrome://tracing. Events are sorted, so the file is as deterministic as the run.
import { writeFileSync } from 'node:fs';
import type { Machine } from '../topology/machine.js';
import type { ThreadTraceData } from './recorder.js';

export interface ChromeEvent {
  name: string;
  ph: 'X' | 's' | 'f' | 'M';
  pid: number;
  tid: number;
  ts?: number;
  dur?: number;
  id?: string;
  bp?: 'e';
  cat?: string;
  args?: Record<string, unknown>;
}

const HOSTS_PID = 1_000_000;
const us = (ps: number): number => ps / 1e6;

export function chromeTrace(parts: ThreadTraceData[], m: Machine, hostNames: string[]): { traceEvents: ChromeEvent[]; displayTimeUnit: 'ns' } {
  const events: ChromeEvent[] = [];
  const where = (track: number): { pid: number; tid: number } => (track >= 0 ? { pid: m.coord(track).sip, tid: track } : { pid: HOSTS_PID, tid: -1 - track });
  const tracks = new Set<number>();
  for (const p of parts) {
    for (const [track, name, start, end] of p.spans) {
      tracks.add(track);
      events.push({ name, ph: 'X', cat: track >= 0 ? 'pe' : 'host', ...where(track), ts: us(start), dur: us(end - start) });
    }
  }
  const ends = new Map<string, [number, number]>();
  for (const p of parts) for (const [id, pe, at] of p.flowEnds) ends.set(id, [pe, at]);
  for (const p of parts) {
    for (const [id, pe, at] of p.flowStarts) {
      const end = ends.get(id);
      if (!end) continue; // a piece never consumed (the run stopped early)
      events.push({ name: 'ipcq', ph: 's', cat: 'ipcq', id, ...where(pe), ts: us(at) });
      events.push({ name: 'ipcq', ph: 'f', bp: 'e', cat: 'ipcq', id, ...where(end[0]), ts: us(end[1]) });
    }
  }
  events.sort((a, b) => (a.ts ?? 0) - (b.ts ?? 0) || a.pid - b.pid || a.tid - b.tid || a.ph.localeCompare(b.ph) || a.name.localeCompare(b.name) || String(a.id).localeCompare(String(b.id)));
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
  for (const sip of [...sips].sort((a, b) => a - b)) meta.push({ name: 'process_name', ph: 'M', pid: sip, tid: 0, args: { name: `SIP ${sip}` } });
  meta.push({ name: 'process_name', ph: 'M', pid: HOSTS_PID, tid: 0, args: { name: 'hosts' } });
  return { traceEvents: [...meta, ...events], displayTimeUnit: 'ns' };
}

export function writeChromeTrace(file: string, parts: ThreadTraceData[], m: Machine, hostNames: string[]): void {
  writeFileSync(file, `${JSON.stringify(chromeTrace(parts, m, hostNames))}\n`);
}

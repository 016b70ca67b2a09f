// --trace (issue 4, item 10): Chrome trace events in virtual time — one track
// per PE with op spans, IPCQ pieces as flow arrows from sender to receiver,
// rank host spans — identical across thread layouts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { ChromeEvent } from '../lib/trace/chrome.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

async function trace(dir: string, name: string, threads: 1 | 'rank' | 'pe'): Promise<{ text: string; events: ChromeEvent[] }> {
  const file = join(dir, name);
  await rt.bench('ccl_allreduce', { topology: 'ring_1d_6', threads, sets: ['ccl.world_size=3', 'ccl.n_elem=96'], trace: file });
  const text = readFileSync(file, 'utf8');
  return { text, events: (JSON.parse(text) as { traceEvents: ChromeEvent[] }).traceEvents };
}

t.test('the trace has a track per PE, kernel and op spans, flows that pair up, and host spans', async (t) => {
  const { events } = await trace(t.testdir(), 'a.json', 'rank');
  const peTracks = events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && String(e.args?.name).startsWith('PE '));
  t.equal(peTracks.length, 3, 'one track per participating PE');
  const spans = events.filter((e) => e.ph === 'X');
  for (const pe of [0, 1, 2]) {
    t.ok(spans.some((e) => e.tid === pe && e.name === 'all_reduce'), `PE ${pe} has its kernel span`);
    t.ok(spans.some((e) => e.tid === pe && e.name === 'vector'), `PE ${pe} has reduction spans`);
  }
  const starts = events.filter((e) => e.ph === 's');
  const ends = new Map(events.filter((e) => e.ph === 'f').map((e) => [e.id, e]));
  t.ok(starts.length >= 2 * 2 * 3, 'at least one piece per step per rank');
  t.ok(starts.every((s) => ends.has(s.id) && (ends.get(s.id)?.ts ?? -1) >= (s.ts ?? 0)), 'every flow ends, no earlier than it starts');
  t.ok(starts.every((s) => ends.get(s.id)?.tid === ((s.tid ?? 0) + 1) % 3), 'flows go east around the ring');
  t.ok(spans.some((e) => e.cat === 'host' && e.name === 'wait all_reduce'), 'rank host spans');
  t.ok(spans.every((e) => (e.dur ?? -1) >= 0 && (e.ts ?? -1) >= 0), 'spans are in virtual time, non-negative');
});

t.test('the trace file is identical under --threads 1 and pe', async (t) => {
  const dir = t.testdir();
  const a = await trace(dir, 'one.json', 1);
  const b = await trace(dir, 'pe.json', 'pe');
  t.equal(a.text, b.text);
});

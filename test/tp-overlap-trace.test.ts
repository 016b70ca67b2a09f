// Runs on: main thread (tap). Covers: issue 25 item 3's "the timeline shows them
// side by side" — in the --trace of a real overlapped transformer layer, every
// IPCQ piece is a `send` span on its DMA channel's track, and on each rank
// (SIP) the sends of the fused collective-matmul kernels overlap the PE's `dot`
// spans in virtual time, where sequence parallelism without overlap has none;
// the channel's spans never overlap each other; and the file is byte for byte
// the same under --threads 1, rank, pe and jitter.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { ChromeEvent } from '../lib/trace/chrome.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

const sets = ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1']; // one PE per rank computes: fewer PEs under --threads pe

async function traceOf(file: string, variant: string, v: { threads?: 1 | 'rank' | 'pe'; jitterSeed?: number | null } = {}): Promise<{ text: string; events: ChromeEvent[] }> {
  await rt.bench('transformer_layer', { sets, options: { preset: 'tiny', variant }, trace: file, ...v });
  const text = readFileSync(file, 'utf8');
  return { text, events: (JSON.parse(text) as { traceEvents: ChromeEvent[] }).traceEvents };
}

/** The sends that overlap, in virtual time, a `dot` of a PE of their own SIP. */
function sendsOverlappingDots(events: ChromeEvent[]): ChromeEvent[] {
  const dots = events.filter((e) => e.ph === 'X' && e.name === 'dot');
  const end = (e: ChromeEvent) => (e.ts ?? 0) + (e.dur ?? 0);
  return events.filter((s) => s.ph === 'X' && s.name === 'send' && dots.some((d) => d.pid === s.pid && (d.ts ?? 0) < end(s) && (s.ts ?? 0) < end(d)));
}

// The overlapped layer's trace under the default layout (rank), read by both tests.
// A folder of this file's own: t.testdir() at the top level is the group's, which the
// other files of the group share and wipe (test/groups/tp.test.ts).
const dir = mkdtempSync(join(tmpdir(), 'kb-tp-trace-'));
const overlap = await traceOf(join(dir, 'overlap.json'), 'tp+sp+overlap');

t.test('with overlap, on every rank the trace has send spans overlapping the GEMMs; without it, none', async (t) => {
  const sends = overlap.events.filter((e) => e.ph === 'X' && e.name === 'send');
  const pieces = overlap.events.filter((e) => e.ph === 's');
  t.equal(sends.length, pieces.length, 'a send span per piece');
  t.ok(sends.every((s) => (s.tid ?? 0) >= 1_000_000 && s.cat === 'ipcq'), 'on DMA channel tracks');
  const hidden = sendsOverlappingDots(overlap.events);
  t.same([...new Set(hidden.map((s) => s.pid))], [0, 1], 'on both SIPs a send overlaps a dot');
  const plain = await traceOf(join(dir, 'sp.json'), 'tp+sp');
  t.ok(plain.events.some((e) => e.name === 'send'), 'the sequence-parallel run sends too');
  t.same(sendsOverlappingDots(plain.events), [], 'but its collectives run between the GEMMs');
  // A channel runs one piece at a time: its spans (sends, waits) never overlap on its track.
  const byTrack = new Map<string, [number, number][]>();
  for (const e of overlap.events) if (e.ph === 'X' && (e.tid ?? 0) >= 1_000_000) byTrack.set(`${e.pid}/${e.tid}`, [...(byTrack.get(`${e.pid}/${e.tid}`) ?? []), [e.ts ?? 0, (e.ts ?? 0) + (e.dur ?? 0)]]);
  const overlaps = [...byTrack.values()].flatMap((l) => l.sort((a, b) => a[0] - b[0]).filter((w, i) => i > 0 && w[0] < l[i - 1][1] - 1e-9));
  t.same(overlaps, [], 'no two spans of one channel overlap');
});

t.test("the overlapped layer's trace is the same file under --threads 1, rank, pe and jitter", async (t) => {
  for (const v of [{ threads: 1 as const }, { threads: 'pe' as const }, { threads: 1 as const, jitterSeed: 7 }]) {
    const other = await traceOf(join(dir, `${v.threads}-${v.jitterSeed ?? 0}.json`), 'tp+sp+overlap', v);
    t.equal(other.text, overlap.text, `${v.threads}/${v.jitterSeed ?? 'no jitter'} against rank`);
  }
});

// Runs on: main thread (tap). Covers: the --trace file against the Chrome
// trace-event rules Perfetto's JSON importer relies on (issue 15 item 3,
// docs/trace.md "The file"), on a run that has every kind of event: kernel and
// op spans, IPCQ flows, credit and receive waits, ring occupancy counters and
// barrier spans (a 3-rank ring all-reduce with one slot per ring).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

type Event = Record<string, unknown>;

async function traceOf(dir: string): Promise<{ traceEvents: Event[] }> {
  const file = join(dir, 'trace.json');
  await rt.bench('ccl_allreduce', { topology: 'ideal_ring_1d_6', sets: ['ccl.world_size=3', 'ccl.n_elem=3072', 'ccl.n_slots=1', 'ccl.vc_chunk_size=1024'], trace: file });
  return JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: Event[] };
}

const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

t.test('the trace follows the Chrome trace-event rules Perfetto imports by', async (t) => {
  const { traceEvents } = await traceOf(t.testdir());
  t.ok(Array.isArray(traceEvents) && traceEvents.length > 0, 'traceEvents is a non-empty array');
  const bad = (what: string, e: Event): string => `${what}: ${JSON.stringify(e)}`;
  const problems: string[] = [];
  for (const e of traceEvents) {
    if (typeof e.name !== 'string' || typeof e.ph !== 'string' || !isNum(e.pid) || !isNum(e.tid)) problems.push(bad('name, ph, pid, tid', e));
    if (e.ph !== 'M' && !(isNum(e.ts) && e.ts >= 0)) problems.push(bad('ts', e));
    switch (e.ph) {
      case 'X':
        if (!(isNum(e.dur) && e.dur >= 0)) problems.push(bad('X needs dur >= 0', e));
        break;
      case 'C': {
        const args = e.args as Record<string, unknown> | undefined;
        if (!args || Object.keys(args).length === 0 || !Object.values(args).every(isNum)) problems.push(bad('C needs numeric args', e));
        break;
      }
      case 'M': {
        const args = e.args as Record<string, unknown> | undefined;
        if (!['thread_name', 'process_name'].includes(e.name as string) || typeof args?.name !== 'string') problems.push(bad('M is thread_name or process_name with args.name', e));
        break;
      }
      case 's':
      case 'f':
        if (!Number.isSafeInteger(e.id)) problems.push(bad('flow ids are integers', e));
        break;
      default:
        problems.push(bad('unexpected ph', e));
    }
  }
  t.same(problems, [], 'every event is well-formed');

  const starts = traceEvents.filter((e) => e.ph === 's');
  const ends = traceEvents.filter((e) => e.ph === 'f');
  const endById = new Map(ends.map((e) => [e.id, e]));
  t.equal(endById.size, ends.length, 'one flow end per id');
  t.equal(new Set(starts.map((e) => e.id)).size, starts.length, 'one flow start per id');
  const unpaired = starts.filter((s) => {
    const f = endById.get(s.id);
    return !f || f.cat !== s.cat || f.name !== s.name || (f.ts as number) < (s.ts as number);
  });
  t.same(unpaired, [], 'every flow start has an end with its id, cat and name, no earlier');
  t.equal(starts.length, ends.length, 'and no end without a start');

  const lastTs = new Map<string, number>();
  const unsorted: Event[] = [];
  for (const e of traceEvents) {
    if (e.ph === 'M') continue;
    const track = e.ph === 'C' ? `${String(e.pid)}/C/${String(e.name)}` : `${String(e.pid)}/${String(e.tid)}`;
    if ((e.ts as number) < (lastTs.get(track) ?? -Infinity)) unsorted.push(e);
    lastTs.set(track, e.ts as number);
  }
  t.same(unsorted, [], 'events are sorted by ts within each track');

  const names = new Set(traceEvents.map((e) => `${String(e.ph)} ${String(e.name)}`));
  for (const kind of ['X credit wait', 'X recv wait', 'X send', 'X barrier', 'X all_reduce', 's ipcq']) t.ok(names.has(kind), `has ${kind}`);
  t.ok([...names].some((n) => /^C ring \d+ east occupancy$/.test(n)), 'has ring occupancy counters');
});

t.test('wait and send spans never overlap on their channel track', async (t) => {
  const { traceEvents } = await traceOf(t.testdir());
  const byTrack = new Map<string, [number, number][]>();
  for (const e of traceEvents) {
    if (e.ph !== 'X' || (e.name !== 'credit wait' && e.name !== 'recv wait' && e.name !== 'send')) continue;
    const k = `${String(e.pid)}/${String(e.tid)}`;
    byTrack.set(k, [...(byTrack.get(k) ?? []), [e.ts as number, (e.ts as number) + (e.dur as number)]]);
  }
  t.ok(byTrack.size > 0, 'there are waits');
  const overlaps = [...byTrack.values()].flatMap((l) => l.filter((w, i) => i > 0 && w[0] < l[i - 1][1] - 1e-9));
  t.same(overlaps, []);
});

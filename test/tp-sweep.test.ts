// Runs on: main thread (tap). Covers: issue 25's sweep of the transformer layer
// over the TP degree and its three variants — the table carries the layer's
// breakdown (GEMM, attention, each collective, exposed communication) as
// columns whose time_* parts add up to crit_ns, and the plot of where the time
// goes (its Vega-Lite spec's data, and the SVG written by --plot) has a bar per
// (TP degree, variant) with the table's values. The HTML page's bars are drawn
// in Chromium by test/report.test.ts.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { timeBreakdownSpec } from '../lib/bench/plots.js';
import { SWEEP_COLUMNS, timeSegments, type Cell } from '../lib/bench/sweep.js';
import { MODEL_PRESETS } from '../lib/tp/presets.js';
import { assertUsageExit, kernbench, kernbenchProcess, ROOT } from './helpers/cli.js';

const SWEEP = ['sweep', '--bench', 'transformer_layer', '--preset', 'tiny', '--over', 'system.sips.count=1,2', '--no-data'];

const PARTS = ['time_gemm_ns', 'time_attention_ns', 'time_vector_ns', 'time_exposed_comm_ns', 'time_other_ns'];
const FIGURES = ['all_reduce_ns', 'all_gather_ns', 'reduce_scatter_ns', 'comm_ns', 'comm_bytes', 'flops'];

// One sweep for the whole file (--json: typed cells), and the table it stands for.
// A folder of this file's own: t.testdir() at the top level is the group's, which the
// other files of the group share and wipe (test/groups/tp.test.ts).
const dir = mkdtempSync(join(tmpdir(), 'kb-tp-sweep-'));
const plotFile = join(dir, 'where.svg');
const swept = await kernbench([...SWEEP, '--json', '--plot', plotFile]);
const objects = swept.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, Cell>);
const columns = Object.keys(objects[0] ?? {}).filter((c) => c !== 'kernbench_version');
const rows = objects.map((o) => columns.map((c) => o[c]));

t.test('a transformer_layer sweep carries the breakdown as columns after the fixed ones, one row per TP degree and variant', async (t) => {
  t.equal(swept.exitCode, 0, swept.stderr);
  t.same(columns, ['system.sips.count', ...SWEEP_COLUMNS, ...PARTS, ...FIGURES]);
  t.same(objects.map((o) => `${String(o['system.sips.count'])} ${String(o.algorithm)}`), ['1 tp', '1 tp+sp', '1 tp+sp+overlap', '2 tp', '2 tp+sp', '2 tp+sp+overlap']);
});

t.test("each row's time parts add up to its crit_ns, and no part is negative", async (t) => {
  for (const o of objects) {
    const parts = PARTS.map((c) => o[c] as number);
    t.ok(parts.every((x) => x >= 0), `${String(o.algorithm)}: ${parts.join(' ')}`);
    t.ok(Math.abs(parts.reduce((a, x) => a + x, 0) - (o.critNs as number)) < 1e-6, `${String(o.algorithm)} at TP ${String(o.worldSize)}: parts sum to crit_ns ${String(o.critNs)}`);
  }
});

t.test('each variant issues its own collectives: the bytes, FLOPs and exposed communication follow from the layer', async (t) => {
  const { hiddenSize: h, seqLength: s } = MODEL_PRESETS.tiny;
  const n = 1 * s * h * 2; // b s h elements of f16: the buffer of every collective of the layer
  const flops = 24 * 1 * s * h * h + 4 * 1 * s * s * h; // Narayanan et al. 2021, one GPT-3-style layer, forward
  for (const o of objects.filter((x) => x.worldSize === 2)) {
    const v = String(o.algorithm);
    const issued = ['all_reduce_ns', 'all_gather_ns', 'reduce_scatter_ns'].filter((c) => (o[c] as number) > 0);
    t.same(issued, v === 'tp' ? ['all_reduce_ns'] : ['all_gather_ns', 'reduce_scatter_ns'], `${v}: its collectives`);
    t.equal(o.comm_bytes, v === 'tp' ? 2 * n : 4 * n, `${v}: bytes`);
    t.equal(o.flops, flops, `${v}: FLOPs`);
    if (v === 'tp+sp+overlap') t.ok((o.time_exposed_comm_ns as number) < (o.comm_ns as number), 'overlap hides part of the communication');
    else t.equal(o.time_exposed_comm_ns, o.comm_ns, `${v}: every collective is exposed`);
  }
});

t.test('a sweep row holds what the same single run reports', async (t) => {
  const one = await kernbench(['run', '--bench', 'transformer_layer', '--preset', 'tiny', '--variant', 'tp+sp+overlap', '--no-data', '--set', 'system.sips.count=2', '--json']);
  const r = JSON.parse(one.stdout) as { critNs: number; extra: Record<string, number> };
  const row = objects.find((o) => o.worldSize === 2 && o.algorithm === 'tp+sp+overlap') as Record<string, number>;
  t.same([row.critNs, row.time_exposed_comm_ns, row.comm_ns, row.flops], [r.critNs, r.extra.exposed_comm_ns, r.extra.comm_ns, r.extra.flops]);
});

t.test('the plot of where the time goes has a bar per TP degree and variant, a segment per part, with the table values', async (t) => {
  const spec = timeBreakdownSpec('t', timeSegments(columns, rows)) as unknown as { data: { values: { group: string; bar: string; part: string; ns: number; order: number }[] }; encoding: { color: { scale: { domain: string[] } } } };
  const want = objects.flatMap((o) => PARTS.map((c, i) => ({ group: `system.sips.count=${String(o['system.sips.count'])}`, bar: String(o.algorithm), part: c.replace(/^time_|_ns$/g, ''), ns: o[c], order: i })));
  t.same(spec.data.values, want);
  t.same(spec.encoding.color.scale.domain, ['gemm', 'attention', 'vector', 'exposed_comm', 'other'], 'stacked in the table order');
});

t.test('sweep --plot writes the chart as SVG: one bar mark per segment', async (t) => {
  const svg = readFileSync(plotFile, 'utf8');
  t.match(svg, /^<svg /);
  t.equal((svg.match(/aria-roledescription="bar"/g) ?? []).length, objects.length * PARTS.length);
  t.match(svg, 'group: system.sips.count=2; part: exposed_comm');
});

t.test('a sweep of a bench without a breakdown plots crit_ns alone, one segment per row', async (t) => {
  const segs = timeSegments(['ccl.n_elem', ...SWEEP_COLUMNS], [['8', 'ring', 'default', 2, 8, 'f32', true, 12.5, 'x'], ['64', 'ring', 'default', 2, 64, 'f32', true, 20, 'y']]);
  t.same(segs, [{ group: 'ccl.n_elem=8', bar: 'ring', part: 'crit_ns', ns: 12.5 }, { group: 'ccl.n_elem=64', bar: 'ring', part: 'crit_ns', ns: 20 }]);
});

t.test('sweep --plot without the optional plotting packages exits 2 before the first point runs', async (t) => {
  const NO_VEGA = ['--import', join(ROOT, 'dist', 'test', 'fixtures', 'no-vega.js')];
  const r = await kernbenchProcess([...SWEEP, '--plot', join(t.testdir(), 'x.svg')], { nodeFlags: NO_VEGA });
  assertUsageExit(t, r);
  t.match(r.stderr, 'npm install vega vega-lite', 'says how to install them');
  // kernbench itself starts under the hook (every bench imported): the refusal is the plot's.
  const plain = await kernbenchProcess(['list'], { nodeFlags: NO_VEGA });
  t.equal(plain.exitCode, 0, plain.stderr);
});

t.test("report FILE.json keeps the bench's columns of saved sweep results, so its page has the bars too", async (t) => {
  const here = t.testdir();
  const saved = join(here, 'sweep.json');
  writeFileSync(saved, swept.stdout);
  const page = join(here, 'r.html');
  const r = await kernbench(['report', saved, '--html', page]);
  t.equal(r.exitCode, 0, r.stderr);
  const html = readFileSync(page, 'utf8');
  t.match(html, '<th>time_exposed_comm_ns</th>');
  const data = JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)?.[1] ?? '{}') as { segments?: unknown[] };
  t.same(data.segments, timeSegments(columns, rows));
});

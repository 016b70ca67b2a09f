// Runs on: main. Owns: the HTML report of a sweep (`kernbench sweep --html`,
// `kernbench report FILE.json...`): one self-contained page — its table, the
// charts' data and script (./report-script.ts), with stacked bars of where the
// time goes when the rows carry time_* columns, a diagram of each topology, the
// run's parameters and kernbench's version, and a link to each saved trace with
// how to open it. Nothing in the page loads from the network (decision 0058).
import { bytesPerElement, isDType } from '../dtype/index.js';
import { loadTopology } from '../config/load.js';
import { topologyPath } from '../config/paths.js';
import { Machine } from '../topology/machine.js';
import { REPORT_SCRIPT } from './report-script.js';
import { timeParts, timeSegments, type Cell } from './sweep.js';

export interface ChartPoint {
  series: string;
  /** Bytes per rank: n_elem x the element size. */
  bytes: number;
  timeUs: number;
  /** All-reduce bus bandwidth, GB/s: bytes / time x 2(n-1)/n. */
  busbw: number;
}

export interface ReportData {
  title: string;
  columns: string[];
  rows: Cell[][];
  /** Run parameters, in order: name and value. */
  params: [string, string][];
  version: string;
  /** Saved traces: a label and a path relative to the page. */
  traces: { label: string; href: string }[];
  /** Topology names to draw (each loaded from topologies/ or its path); sets apply to each. */
  topologies: string[];
  sets: string[];
}

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The points of the charts: one per row, a series per (algorithm, topology, and the grid's other axes but n_elem). */
export function chartPoints(columns: string[], rows: Cell[][]): { points: ChartPoint[]; series: string[] } {
  const col = (name: string): number => columns.indexOf(name);
  const [alg, topo, ws, nElem, dtype, crit] = ['algorithm', 'topology', 'worldSize', 'nElem', 'dtype', 'critNs'].map(col);
  // Axes are the columns before the fixed ones; n_elem is the x axis, not a series.
  const axes = columns.map((c, i) => ({ c, i })).filter(({ c }) => c.includes('.') && c !== 'ccl.n_elem');
  const points = rows.map((r): ChartPoint => {
    const bpe = isDType(String(r[dtype])) ? bytesPerElement(String(r[dtype]) as Parameters<typeof bytesPerElement>[0]) : 4;
    const bytes = Number(r[nElem]) * bpe;
    const critNs = Number(r[crit]);
    const p = Number(r[ws]);
    const extra = axes.filter(({ c }) => c !== 'ccl.algorithm' && c !== 'system.sips.topology').map(({ c, i }) => `${c}=${String(r[i])}`);
    return { series: [`${String(r[alg])} on ${String(r[topo])}`, ...extra].join(', '), bytes, timeUs: critNs / 1000, busbw: critNs > 0 ? (bytes / critNs) * ((2 * (p - 1)) / p) : 0 };
  });
  return { points, series: [...new Set(points.map((p) => p.series))] };
}

/**
 * A SIP-level topology as SVG: SIPs on their grid, a straight line per link
 * between neighbours, and each wrap-around link as two dashed stubs leaving the
 * ends of its row (column) outward, out of the grid: "out one edge, in at the
 * opposite", crossing no other link and never drawn between two columns.
 */
export function topologySvg(name: string, m: Machine): string {
  const { w, h } = m.sipGrid;
  const step = 90, pad = 50, stub = 34;
  const at = (s: number): [number, number] => [pad + (s % w) * step, pad + Math.floor(s / w) * step];
  const width = pad * 2 + (w - 1) * step, height = pad * 2 + (h - 1) * step;
  const parts: string[] = [];
  const line = (x1: number, y1: number, x2: number, y2: number, cls: string): number => parts.push(`<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" class="${cls}"/>`);
  for (let a = 0; a < m.sips; a++) {
    for (let b = a + 1; b < m.sips; b++) {
      if (m.sipHops(a, b) !== 1) continue;
      const [ax, ay] = at(a), [bx, by] = at(b);
      if (Math.abs(ax - bx) + Math.abs(ay - by) === step) {
        line(ax, ay, bx, by, 'link');
        continue;
      }
      // a is the lower-numbered end: the left end of a row, the top end of a column.
      const [ux, uy] = ay === by ? [1, 0] : [0, 1];
      line(ax, ay, ax - ux * stub, ay - uy * stub, 'link wrap');
      line(bx, by, bx + ux * stub, by + uy * stub, 'link wrap');
    }
  }
  for (let s = 0; s < m.sips; s++) {
    const [x, y] = at(s);
    parts.push(`<circle cx="${x}" cy="${y}" r="16" class="sip"/><text x="${x}" y="${y + 4}" text-anchor="middle" class="sip-label">${s}</text>`);
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escape(name)}">${parts.join('')}</svg>`;
}

function diagram(name: string, sets: string[]): string {
  try {
    const t = loadTopology(topologyPath(name), sets.filter((s) => !s.startsWith('ccl.')));
    return `<figure><figcaption>${escape(name)}: ${t.system.sips.count} SIPs, ${escape(t.system.sips.topology)}</figcaption>${topologySvg(name, new Machine(t))}<figcaption class="note">SIPs numbered by rank; solid: a link between neighbours; dashed stubs: a wrap-around link, out one edge and in at the opposite one</figcaption></figure>`;
  } catch (e) {
    // A topology the page cannot draw (a file moved since the run) is said, not hidden.
    return `<figure><figcaption>${escape(name)}: no diagram (${escape(e instanceof Error ? e.message.split('\n')[0] : String(e))})</figcaption></figure>`;
  }
}

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th { background: #f3f3f3; } td.bad { color: #b00; font-weight: bold; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; }
svg.chart { border: 1px solid #ddd; background: #fff; }
.grid { stroke: #eee; } .axes text { font-size: 11px; fill: #444; } .axes .title { font-size: 12px; fill: #222; }
path.series { fill: none; stroke-width: 2; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; max-width: 640px; font-size: 12px; }
.key i { display: inline-block; width: 14px; height: 3px; margin: 0 6px 3px 0; vertical-align: middle; }
.link { stroke: #555; stroke-width: 2; fill: none; } .wrap { stroke-dasharray: 5 4; }
.sip { fill: #1f4e79; } .sip-label { fill: #fff; font-size: 11px; } .note { font-size: 11px; color: #555; max-width: 260px; }
figure { display: inline-block; margin: 0 24px 12px 0; vertical-align: top; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; } dt { font-weight: bold; } dd { margin: 0; font-family: monospace; }
`;

/** The whole page. */
export function reportHtml(r: ReportData): string {
  const { points, series } = chartPoints(r.columns, r.rows);
  // Where the time goes, when the rows carry the parts of crit_ns (time_* columns).
  const segments = timeParts(r.columns).length > 0 ? timeSegments(r.columns, r.rows) : [];
  const okCol = r.columns.lastIndexOf('ok');
  const table = [
    `<table><thead><tr>${r.columns.map((c) => `<th>${escape(c)}</th>`).join('')}</tr></thead><tbody>`,
    ...r.rows.map((row) => `<tr>${row.map((v, i) => `<td${i === okCol && v !== true && v !== 'true' ? ' class="bad"' : ''}>${escape(String(v))}</td>`).join('')}</tr>`),
    '</tbody></table>',
  ].join('\n');
  const traces =
    r.traces.length === 0
      ? '<p>No trace was saved with these results (run the sweep with <code>--trace-dir DIR</code> to keep one per point).</p>'
      : `<p>Open a trace in Perfetto: go to <a href="https://ui.perfetto.dev">ui.perfetto.dev</a>, choose <em>Open trace file</em> and pick the file (or drag it onto the page). The trace stays on your machine.</p><ul>${r.traces.map((t) => `<li><a href="${escape(t.href)}" download>${escape(t.label)}</a></li>`).join('')}</ul>`;
  // JSON inside <script>: "<" escaped so no "</script>" in a value can end the element.
  const json = JSON.stringify({ points, series, segments }).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escape(r.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escape(r.title)}</h1>
<h2>Charts</h2>
<label><input type="checkbox" id="log-axes" checked> log axes</label>
<div class="charts">
<div><svg id="chart-time" class="chart" width="640" height="340" role="img" aria-label="time over size"></svg><div class="legend series"></div></div>
<div><svg id="chart-busbw" class="chart" width="640" height="340" role="img" aria-label="bus bandwidth over size"></svg><div class="legend series"></div></div>
</div>
<p>Time is virtual (crit_ns: the slowest PE). Bus bandwidth is all-reduce's: size / time x 2(n-1)/n. Hover a point for its values.</p>
${segments.length === 0 ? '' : `<h2>Where the time goes</h2>
<div><svg id="chart-parts" class="chart" width="640" height="340" role="img" aria-label="where the time goes"></svg><div class="legend" id="parts-legend"></div></div>
<p>A bar per row, grouped by grid point; its segments are the row's time_* columns, which add up to its crit_ns. Hover a segment for its value.</p>`}
<h2>Results</h2>
${table}
<h2>Topologies</h2>
${r.topologies.map((t) => diagram(t, r.sets)).join('\n')}
<h2>Run</h2>
<dl>${[...r.params, ['kernbench version', r.version] as [string, string]].map(([k, v]) => `<dt>${escape(k)}</dt><dd>${escape(v)}</dd>`).join('')}</dl>
<h2>Traces</h2>
${traces}
<script type="application/json" id="report-data">${json}</script>
<script>${REPORT_SCRIPT}</script>
</body>
</html>
`;
}

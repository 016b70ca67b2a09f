// Runs on: main. Owns: the evaluation figures, as SVG rendered headless from
// Vega-Lite specs (vega-lite compiles, vega renders with no canvas), so
// plotting is a maintained library's job, not hand-drawn SVG.
//
// vega and vega-lite are optional (peer) dependencies: a plain install has no
// plotting, and they load with the first figure (decision 0057). Types only are
// imported statically; they vanish from the JavaScript.
import type { TopLevelSpec } from 'vega-lite';
import { KernbenchError } from '../errors.js';
import type { Machine } from '../topology/machine.js';
import type { TimeSegment } from './sweep.js';

/** The packages plotting needs, as a user would install them. */
export const PLOT_PACKAGES = ['vega', 'vega-lite'] as const;

// vega and vega-lite take ~0.5 s to import here; they load with the first figure, so
// that importing this module (every bench is imported by `kernbench list`) costs nothing.
let libraries: Promise<[typeof import('vega'), typeof import('vega-lite')]> | undefined;

/**
 * vega and vega-lite, imported once. ERR_OPTIONAL_DEPENDENCY, with the command
 * that installs them, when either is missing. A bench that plots calls this
 * before its runs, so a missing package is found before the work, not after.
 */
export function loadPlotting(): Promise<[typeof import('vega'), typeof import('vega-lite')]> {
  libraries ??= Promise.all([import('vega'), import('vega-lite')]).catch((e: unknown) => {
    libraries = undefined; // installing them and calling again works
    const err = e as NodeJS.ErrnoException;
    if (err.code !== 'ERR_MODULE_NOT_FOUND') throw e;
    const missing = PLOT_PACKAGES.find((p) => err.message.includes(`'${p}'`)) ?? PLOT_PACKAGES.join(' and ');
    throw new KernbenchError('ERR_OPTIONAL_DEPENDENCY', `plots need the optional packages ${PLOT_PACKAGES.join(' and ')}; install them with: npm install ${PLOT_PACKAGES.join(' ')}, got no package '${missing}'`);
  });
  return libraries;
}

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [vega, vegaLite] = await loadPlotting();
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

export interface LatencyPoint {
  nElem: number;
  critNs: number;
  series: string;
}

/**
 * crit_ns against n_elem (log-log), one line per series. Series that nearly
 * coincide (tcm and sram staging) stay visible: each later series is drawn over
 * the earlier ones with a sparser dash (solid, dashed, dotted, ...), so the line
 * under it shows through the gaps, and its points are hollow shapes of their own. The log axes span the data (nice: false): a
 * "nice" log domain rounds out to whole decades and left a third of the plot empty.
 * Legend labels are never cut (labelLimit 0).
 */
export function latencyChart(title: string, points: LatencyPoint[]): Promise<string> {
  const series = { field: 'series', type: 'nominal' } as const;
  return renderSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 480,
    height: 300,
    data: { values: points },
    mark: { type: 'line', point: { size: 70, filled: false, strokeWidth: 1.5 }, strokeWidth: 2 },
    encoding: {
      x: { field: 'nElem', type: 'quantitative', scale: { type: 'log', nice: false, padding: 8 }, title: 'n_elem per rank' },
      y: { field: 'critNs', type: 'quantitative', scale: { type: 'log', nice: false, padding: 8 }, title: 'crit_ns (virtual)' },
      // Tableau 10 reordered so that the first three series have far-apart hues (the third was red after orange).
      color: { ...series, title: null, legend: { labelLimit: 0 }, scale: { range: ['#4c78a8', '#f58518', '#54a24b', '#b279a2', '#e45756', '#72b7b2', '#9d755d'] } },
      strokeDash: { ...series, title: null, legend: { labelLimit: 0 }, scale: { range: [[1, 0], [7, 4], [2, 3], [10, 3, 2, 3], [4, 6]] } },
      shape: { ...series, title: null, legend: { labelLimit: 0 } },
    },
  } as TopLevelSpec);
}

/**
 * Where the time goes: a stacked bar per row of a sweep (its algorithm: a
 * layer's variant), side by side in a column per grid point (the TP degree),
 * a segment per part of crit_ns (sweep.ts timeSegments), stacked in the
 * table's order from the axis up. Data and order only: the test reads the spec.
 */
export function timeBreakdownSpec(title: string, segments: TimeSegment[]): TopLevelSpec {
  const uniq = (xs: string[]) => [...new Set(xs)];
  const parts = uniq(segments.map((s) => s.part));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    data: { values: segments.map((s) => ({ ...s, order: parts.indexOf(s.part) })) },
    mark: 'bar',
    width: { step: 40 },
    height: 300,
    encoding: {
      column: { field: 'group', type: 'ordinal', sort: uniq(segments.map((s) => s.group)), title: null, header: { labelOrient: 'bottom' } },
      x: { field: 'bar', type: 'nominal', sort: uniq(segments.map((s) => s.bar)), title: null, axis: { labelAngle: -45 } },
      y: { field: 'ns', type: 'quantitative', stack: 'zero', title: 'virtual ns (slowest rank)' },
      color: { field: 'part', type: 'nominal', title: 'where the time goes', scale: { domain: parts, range: ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#9d755d', '#72b7b2', '#b279a2'] }, legend: { labelLimit: 0 } },
      order: { field: 'order', type: 'quantitative' },
      tooltip: [{ field: 'group' }, { field: 'bar' }, { field: 'part' }, { field: 'ns', type: 'quantitative' }],
    },
  } as TopLevelSpec;
}

/** timeBreakdownSpec drawn as SVG (needs the optional plotting packages). */
export function timeBreakdownChart(title: string, segments: TimeSegment[]): Promise<string> {
  return renderSvg(timeBreakdownSpec(title, segments));
}

/** How far a wrap-around link's stubs reach out of the grid (grid steps; the plot keeps half a step around it). */
const STUB = 0.42;

/**
 * The SIP-level topology: SIPs on their grid, a solid rule per link between
 * neighbours. A wrap-around link joins the two ends of a row (column): drawn as
 * a dashed stub leaving each end outward, out of the grid, it reads as "leaves
 * this edge, enters at the opposite one" and crosses no other link.
 */
export function topologyDiagram(title: string, m: Machine): Promise<string> {
  const { w, h } = m.sipGrid;
  const nodes = Array.from({ length: m.sips }, (_, s) => ({ sip: `SIP ${s}`, x: s % w, y: Math.floor(s / w) }));
  const NEIGHBOUR = 'between neighbours';
  const WRAP = 'wrap-around (out one edge, in the opposite)';
  const edges: { x: number; y: number; x2: number; y2: number; link: string }[] = [];
  for (let a = 0; a < m.sips; a++) {
    for (let b = a + 1; b < m.sips; b++) {
      if (m.sipHops(a, b) !== 1) continue;
      const A = nodes[a], B = nodes[b];
      if (Math.abs(A.x - B.x) + Math.abs(A.y - B.y) === 1) {
        edges.push({ x: A.x, y: A.y, x2: B.x, y2: B.y, link: NEIGHBOUR });
        continue;
      }
      // A is the lower-numbered end: the left end of a row, the top end of a column.
      const [ux, uy] = A.y === B.y ? [1, 0] : [0, 1];
      edges.push({ x: A.x, y: A.y, x2: A.x - ux * STUB, y2: A.y - uy * STUB, link: WRAP });
      edges.push({ x: B.x, y: B.y, x2: B.x + ux * STUB, y2: B.y + uy * STUB, link: WRAP });
    }
  }
  return renderSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: Math.max(160, 90 * w),
    height: Math.max(80, 90 * h),
    layer: [
      {
        data: { values: edges },
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: {
          x: { field: 'x', type: 'quantitative', axis: null, scale: { domain: [-0.5, w - 0.5] } },
          y: { field: 'y', type: 'quantitative', axis: null, scale: { domain: [h - 0.5, -0.5] } },
          x2: { field: 'x2' },
          color: { value: '#555' },
          y2: { field: 'y2' },
          strokeDash: { field: 'link', type: 'nominal', title: 'link', scale: { domain: [NEIGHBOUR, WRAP], range: [[1, 0], [5, 4]] }, legend: { labelLimit: 0, orient: 'bottom' } },
        },
      },
      {
        data: { values: nodes },
        mark: { type: 'circle', size: 900, opacity: 1 },
        encoding: {
          x: { field: 'x', type: 'quantitative', axis: null, scale: { domain: [-0.5, w - 0.5] } },
          y: { field: 'y', type: 'quantitative', axis: null, scale: { domain: [h - 0.5, -0.5] } },
        },
      },
      {
        data: { values: nodes },
        mark: { type: 'text', color: 'white', fontSize: 10 },
        encoding: {
          x: { field: 'x', type: 'quantitative', axis: null, scale: { domain: [-0.5, w - 0.5] } },
          y: { field: 'y', type: 'quantitative', axis: null, scale: { domain: [h - 0.5, -0.5] } },
          text: { field: 'sip' },
        },
      },
    ],
  } as TopLevelSpec);
}

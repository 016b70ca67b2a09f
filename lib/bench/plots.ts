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

/** crit_ns against n_elem (log-log), one line per series. */
export function latencyChart(title: string, points: LatencyPoint[]): Promise<string> {
  return renderSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 480,
    height: 300,
    data: { values: points },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'nElem', type: 'quantitative', scale: { type: 'log' }, title: 'n_elem per rank' },
      y: { field: 'critNs', type: 'quantitative', scale: { type: 'log' }, title: 'crit_ns (virtual)' },
      color: { field: 'series', type: 'nominal', title: null },
    },
  } as TopLevelSpec);
}

/** The SIP-level topology: SIPs on their grid, one rule per link (wrap links drawn as arcs would clutter: they are dashed). */
export function topologyDiagram(title: string, m: Machine): Promise<string> {
  const { w, h } = m.sipGrid;
  const nodes = Array.from({ length: m.sips }, (_, s) => ({ sip: `SIP ${s}`, x: s % w, y: Math.floor(s / w) }));
  const edges: { x: number; y: number; x2: number; y2: number; wrap: boolean }[] = [];
  for (let a = 0; a < m.sips; a++) {
    for (let b = a + 1; b < m.sips; b++) {
      if (m.sipHops(a, b) !== 1) continue;
      const A = nodes[a], B = nodes[b];
      const wrap = Math.abs(A.x - B.x) + Math.abs(A.y - B.y) !== 1;
      // A wrap-around link would lie on top of the row (column) it closes: draw it just outside.
      const dy = wrap && A.y === B.y ? -0.35 : 0;
      const dx = wrap && A.x === B.x ? -0.35 : 0;
      edges.push({ x: A.x + dx, y: A.y + dy, x2: B.x + dx, y2: B.y + dy, wrap });
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
          strokeDash: { field: 'wrap', type: 'nominal', title: 'wrap-around link' },
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

// Runs on: any thread. Owns: the line_1d SIP topology kind — the SIPs in a
// chain: ring_1d without the link from the last SIP back to the first.
import { defineSipTopology, dimensionOrderRoute, EAST, rowGrid, WEST } from '../define-kind.js';

export const kind = defineSipTopology({
  name: 'line_1d',
  summary: 'SIPs in a chain: s links to s + 1 and s - 1, no wrap; no w/h',
  grid: (sips) => rowGrid('line_1d', sips),
  // There is only one way along a chain.
  hops: (a, b) => Math.abs(a - b),
  // The links crossed: dimension order, ties to the lower direction index (define-kind.ts).
  route: (a, b, grid) => dimensionOrderRoute(a, b, grid, false),
  neighbour: (rank, dir, { w, h }) => {
    if (dir === EAST) return rank + 1 < w * h ? rank + 1 : -1;
    if (dir === WEST) return rank > 0 ? rank - 1 : -1;
    return -1;
  },
  diagram: [
    '0 - 1 - 2 - .. - n-1     (no wrap)',
  ],
});

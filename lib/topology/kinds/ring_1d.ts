// Runs on: any thread. Owns: the ring_1d SIP topology kind — the SIPs in a
// ring, each linked to the next and the last to the first.
import { defineSipTopology, dimensionOrderRoute, EAST, rowGrid, WEST } from '../define-kind.js';

export const kind = defineSipTopology({
  name: 'ring_1d',
  summary: 'SIPs in a ring: s links to s + 1 and s - 1 (mod count); no w/h',
  grid: (sips) => rowGrid('ring_1d', sips),
  // The shorter way round.
  hops: (a, b, { w, h }) => {
    const d = Math.abs(a - b);
    return Math.min(d, w * h - d);
  },
  // The links crossed: dimension order, ties to the lower direction index (define-kind.ts).
  route: (a, b, grid) => dimensionOrderRoute(a, b, grid, true),
  neighbour: (rank, dir, { w, h }) => {
    const n = w * h;
    if (dir === EAST) return (rank + 1) % n;
    if (dir === WEST) return (rank - 1 + n) % n;
    return -1;
  },
  diagram: [
    '0 - 1 - 2 - .. - n-1',
    '\'-------------------\'   (the last links back to the first)',
  ],
});

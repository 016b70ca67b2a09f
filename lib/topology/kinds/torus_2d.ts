// Runs on: any thread. Owns: the torus_2d SIP topology kind — a w x h grid
// whose rows and columns wrap around (every row and column is a ring).
import { defineSipTopology, dimensionOrderRoute, explicitGrid, step, xy } from '../define-kind.js';

export const kind = defineSipTopology({
  name: 'torus_2d',
  summary: 'a w x h grid of SIPs whose rows and columns wrap (system.sips.w * h = count)',
  grid: (sips) => explicitGrid('torus_2d', sips),
  // Dimension order, each dimension the shorter way round.
  hops: (a, b, grid) => {
    const p = xy(a, grid), q = xy(b, grid);
    const dx = Math.abs(p.x - q.x), dy = Math.abs(p.y - q.y);
    return Math.min(dx, grid.w - dx) + Math.min(dy, grid.h - dy);
  },
  // The links crossed: dimension order, ties to the lower direction index (define-kind.ts).
  route: (a, b, grid) => dimensionOrderRoute(a, b, grid, true),
  neighbour: (rank, dir, { w, h }) => {
    const { x, y } = step(rank, dir, { w, h });
    return ((y + h) % h) * w + ((x + w) % w);
  },
  diagram: [
    '.- 0 - 1 - 2 -.    rows and columns wrap:',
    '   |   |   |       a ring along every row',
    '.- 3 - 4 - 5 -.    and every column',
    '   |   |   |',
    "   '   '   '",
  ],
});

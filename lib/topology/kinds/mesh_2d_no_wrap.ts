// Runs on: any thread. Owns: the mesh_2d_no_wrap SIP topology kind — a w x h
// grid without wrap-around links (every row and column is a line).
import { defineSipTopology, dimensionOrderRoute, explicitGrid, step, xy } from '../define-kind.js';

export const kind = defineSipTopology({
  name: 'mesh_2d_no_wrap',
  summary: 'a w x h grid of SIPs without wrap-around (system.sips.w * h = count)',
  grid: (sips) => explicitGrid('mesh_2d_no_wrap', sips),
  // Manhattan distance (dimension-order routing).
  hops: (a, b, grid) => {
    const p = xy(a, grid), q = xy(b, grid);
    return Math.abs(p.x - q.x) + Math.abs(p.y - q.y);
  },
  // The links crossed: dimension order, ties to the lower direction index (define-kind.ts).
  route: (a, b, grid) => dimensionOrderRoute(a, b, grid, false),
  neighbour: (rank, dir, { w, h }) => {
    const { x, y } = step(rank, dir, { w, h });
    return x < 0 || x >= w || y < 0 || y >= h ? -1 : y * w + x;
  },
  diagram: [
    '0 - 1 - 2        a w x h grid,',
    '|   |   |        no wrap-around',
    '3 - 4 - 5',
  ],
});

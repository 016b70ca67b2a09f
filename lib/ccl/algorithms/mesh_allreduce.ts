// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the 2-D all-reduce over a w x h grid of ranks (rank = y * w + x).
// Steps and alpha-beta cost: docs/algorithms/mesh_allreduce.md.
//
// Which of the two it runs is asked of the world, not of the kind's name: rows
// and columns that wrap (the last rank's neighbour is the first) are rings.
//
// torus_2d (every row and column is a ring):
//   1. reduce-scatter along the row (ring of w, east):      rank owns row chunk (x + 1) mod w
//   2. reduce-scatter that chunk along the column (ring of h, south): owns a 1/(w h) piece
//   3. all-gather the row chunk along the column
//   4. all-gather the whole tile along the row
//   Cost: 2(w - 1)(alpha + N/(w beta)) + 2(h - 1)(alpha + N/(w h beta)).
// mesh_2d_no_wrap (rows and columns are lines): a line all-reduce of the whole
//   tile along the row, then along the column (lib/ccl/steps.ts lineAllReduce:
//   a 2-rank line is a 2-rank ring; a longer one reduces toward its last rank
//   in p pieces and broadcasts back).
import { defineKernel } from '../../kernel/define.js';
import { defineAlgorithm } from '../define-algorithm.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import type { ReduceOp } from '../reduce-op.js';
import { Chunks, lineAllReduce, reductionOf, ringAllGather, ringReduceScatter, scaleChunk } from '../steps.js';
import { neighbourRank, type WorldShape } from '../world.js';

export const meta = defineAlgorithm({
  provides: 'all_reduce',
  arrangement: 'logical',
  topologies: ['torus_2d', 'mesh_2d_no_wrap', 'line_1d'],
  summary: '2-D: rows then columns, on the topology file\'s SIP grid (docs/algorithms/mesh_allreduce.md)',
});

export const allReduce = defineKernel(import.meta.url, 'allReduce', async (tl, t: TensorDesc, op: ReduceOp, shape: WorldShape, _params: Record<string, unknown>) => {
  if (shape.kind === 'tree' || shape.kind === 'none' || shape.kind === 'hierarchical') {
    throw tl.error('ERR_WRONG_WORLD', `mesh_allreduce runs on a grid of ranks arranged as a SIP topology kind (torus_2d, mesh_2d_no_wrap), got a ${shape.kind} world`);
  }
  const { w, h } = shape;
  // A dimension of one rank has nothing to wrap.
  const rowsWrap = w === 1 || neighbourRank(shape, w - 1, 0) === 0;
  const columnsWrap = h === 1 || neighbourRank(shape, (h - 1) * w, 3) === 0;
  const x = tl.rank % w;
  const y = Math.floor(tl.rank / w);
  const red = reductionOf(op);
  const avg = op === 'avg' ? 1 / (w * h) : null;
  const data = await tl.load(t);
  const full = new Chunks(0, data.size, w);
  const row = { p: w, pos: x, send: 'east', recv: 'west' } as const;
  const col = { p: h, pos: y, send: 'south', recv: 'north' } as const;
  if (rowsWrap && columnsWrap) {
    const own = await ringReduceScatter(tl, data, full, row, red);
    const part = full.split(own, h);
    const piece = await ringReduceScatter(tl, data, part, col, red);
    if (avg !== null) scaleChunk(tl, data, part, piece, avg);
    await ringAllGather(tl, data, part, col);
    await ringAllGather(tl, data, full, row);
  } else {
    // The scale for avg belongs to the last dimension that has more than one rank.
    await lineAllReduce(tl, data, new Chunks(0, data.size, w), { p: w, pos: x, fwd: 'east', back: 'west' }, red, h === 1 ? avg : null);
    await lineAllReduce(tl, data, new Chunks(0, data.size, h), { p: h, pos: y, fwd: 'south', back: 'north' }, red, h === 1 ? null : avg);
  }
  await tl.store(t, data);
});

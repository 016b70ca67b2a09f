// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the binary-tree all-reduce over a `tree` world (lib/ccl/world.ts):
// rank r's parent is (r - 1) >> 1 (north), its children 2r + 1 (east) and
// 2r + 2 (west). Steps and alpha-beta cost: docs/algorithms/tree_allreduce.md.
//   reduce     receive the whole tile from each child (both receives are issued
//              first, so they overlap), reduce them into the local copy in child
//              order (east, then west), send the result to the parent.
//   root       rank 0 ends with the full reduction (avg: scales it by 1/p).
//   broadcast  receive the result from the parent, send it to each child.
import { defineKernel } from '../../kernel/define.js';
import { defineAlgorithm } from '../define-algorithm.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import { dirIndex, type Direction } from '../../shm/layout.js';
import type { ReduceOp } from '../reduce-op.js';
import { reductionOf } from '../steps.js';
import { neighbourRank, type WorldShape } from '../world.js';

const CHILDREN: Direction[] = ['east', 'west'];

export const meta = defineAlgorithm({
  provides: 'all_reduce',
  arrangement: 'tree',
  topologies: ['ring_1d'],
  summary: 'binary tree reduce + broadcast (docs/algorithms/tree_allreduce.md)',
});

export const allReduce = defineKernel(import.meta.url, 'allReduce', async (tl, t: TensorDesc, op: ReduceOp, shape: WorldShape, _params: Record<string, unknown>) => {
  if (shape.kind !== 'tree') throw tl.error('ERR_WRONG_WORLD', `tree_allreduce runs on a tree world, got a ${shape.kind} world`);
  const r = tl.rank;
  let data = await tl.load(t);
  const n = data.size;
  const children = CHILDREN.filter((d) => neighbourRank(shape, r, dirIndex(d)) >= 0);
  const incoming = children.map((d) => tl.recvAsync(d, n, t.dtype));
  for (const f of incoming) data = tl.reduce(reductionOf(op), data, await tl.wait(f));
  if (r > 0) {
    const sent = tl.send('north', data);
    data = await tl.recv('north', n, t.dtype);
    await sent;
  } else if (op === 'avg') {
    data = tl.scale(data, 1 / tl.worldSize);
  }
  const sends = children.map((d) => tl.send(d, data));
  for (const s of sends) await s;
  await tl.store(t, data);
});

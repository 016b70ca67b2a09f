// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the hierarchical all-reduce (seed ADR-0029 PE -> cube -> SIP, with
// ADR-0032's centre root as a variant) over a `hierarchical` world: every PE
// holding a shard of the tensor, on every rank's SIP, is a participant; each
// shard is one participant's buffer and every shard ends holding the
// reduction over all of them. The wiring (one tree per SIP, rooted at a
// gateway PE, and a ring of gateways) is lib/ccl/hierarchy.ts.
// Steps and alpha-beta cost: docs/algorithms/hierarchical_allreduce.md.
//   1. up the SIP's tree: receive each child's partial (all receives issued
//      first), reduce them in child order, send the result to the parent;
//      PE links inside a cube are pe_pe, links between cubes cube_cube.
//   2. gateways: ring all-reduce of the SIP partials across SIPs (sip_sip);
//      avg scales by 1 / (participants) here, once.
//   3. down the tree: receive the result from the parent, send it to each child.
// params.root (corner | center) picks each SIP's root cube; placement builds
// the world from it (shape.levels.root), which is what the kernel reads.
import { defineKernel } from '../../kernel/define.js';
import { z } from 'zod';
import { defineAlgorithm } from '../define-algorithm.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';
import { DIRECTIONS } from '../../shm/layout.js';
import { HIERARCHY_ROOTS, hierarchyPlan } from '../hierarchy.js';
import type { ReduceOp } from '../reduce-op.js';
import { Chunks, reductionOf, ringAllReduce } from '../steps.js';
import type { WorldShape } from '../world.js';

export const meta = defineAlgorithm({
  provides: 'all_reduce',
  arrangement: 'hierarchical',
  topologies: ['ring_1d'],
  summary: 'PE -> cube -> SIP trees, then a ring of SIP gateways (docs/algorithms/hierarchical_allreduce.md)',
  params: z.strictObject({
    /** Where each SIP's tree is rooted: the tensor's first cube, or the centre cube (fewest cube_cube hops). */
    root: z.enum(HIERARCHY_ROOTS).default('corner'),
  }),
});

export const allReduce = defineKernel(import.meta.url, 'allReduce', async (tl, t: TensorDesc, op: ReduceOp, shape: WorldShape, _params: Record<string, unknown>) => {
  if (shape.kind !== 'hierarchical') throw tl.error('ERR_WRONG_WORLD', `hierarchical_allreduce runs on a hierarchical world, got a ${shape.kind} world`);
  const L = shape.w;
  const sips = shape.h;
  const local = tl.rank % L;
  const plan = hierarchyPlan(shape.levels, sips);
  let data = await tl.load(t);
  const n = data.size;
  const children = plan.children[local];
  const incoming = children.map((c) => tl.recvAsync(DIRECTIONS[c.dir], n, t.dtype));
  for (const f of incoming) data = tl.reduce(reductionOf(op), data, await tl.wait(f));
  if (local !== plan.gateway) {
    const up = DIRECTIONS[plan.parentDir[local]];
    const sent = tl.send(up, data);
    data = await tl.recv(up, n, t.dtype);
    await sent;
  } else if (sips > 1) {
    await ringAllReduce(tl, data, new Chunks(0, n, sips), { p: sips, pos: Math.floor(tl.rank / L), send: 'east', recv: 'west' }, op, sips * L);
  } else if (op === 'avg') {
    data = tl.scale(data, 1 / L);
  }
  const sends = children.map((c) => tl.send(DIRECTIONS[c.dir], data));
  for (const s of sends) await s;
  await tl.store(t, data);
});

// Runs on: host threads. Owns: where a collective runs — the PEs, the world
// each of them sees and its CCL rank — from this rank's tensor shards, the
// process group and the algorithm's arrangement (lib/ccl/registry.ts).
//
// Group rank q runs on SIP ranks[q] (rank r owns SIP r: torch.ahbm.setDevice).
//   flat arrangements (ring, logical, tree): one world per shard position
//     (cube, pe): the PEs at that position on every member's SIP, in group-rank
//     order. Each shard is all-reduced with its peers at the same position, so
//     the result is the elementwise reduction of the ranks' whole tensors.
//   hierarchical: one world of every shard PE of every member (L per SIP);
//     each shard is a participant (seed ADR-0029's all-PE mapping).
import { KernbenchError } from '../errors.js';
import type { Machine } from '../topology/machine.js';
import type { ProcessGroup } from './process-group.js';
import type { Arrangement } from './registry.js';
import { shapeOf, type World, type WorldShape } from './world.js';
import { tabulate } from '../tabulate.js';

/** A shard's position inside its SIP. */
export interface ShardPosition {
  cube: number;
  pe: number;
}

export interface CollectivePlacement {
  /** This rank's PEs that run the kernel, in shard order. */
  pes: number[];
  /** The world each of them sees. */
  worlds: World[];
  /** Each one's CCL rank in its world. */
  ranks: number[];
  /** The arrangement without PEs (the same for every PE; kernels take it as an argument). */
  shape: WorldShape;
}

/**
 * Place collective `name` for group rank `me` of `group`, whose shards sit at
 * `shards` on its SIP (every member must use the same layout).
 */
export function placeCollective(m: Machine, name: string, shards: readonly ShardPosition[], group: ProcessGroup, me: number, arr: Arrangement): CollectivePlacement {
  const seen = new Set(shards.map((s) => `${s.cube}:${s.pe}`));
  if (seen.size !== shards.length) {
    throw new KernbenchError('ERR_INVALID_ARG', `${name}: two shards share a PE; give each PE one shard (DPPolicy numPes), got shards at ${shards.map((s) => `(cube ${s.cube}, pe ${s.pe})`).join(' ')}`);
  }
  const peAt = (q: number, s: ShardPosition): number => m.peId({ sip: group.globalRank(q), cube: s.cube, pe: s.pe });
  const p = group.size;
  if (arr.kind === 'hierarchical') {
    const L = shards.length;
    const pes: number[] = [];
    for (let q = 0; q < p; q++) for (const s of shards) pes.push(peAt(q, s));
    const world: World = { kind: 'hierarchical', w: L, h: p, pes, levels: { cubeOf: shards.map((s) => s.cube), cubeMesh: { ...m.cubeMesh }, root: arr.root } };
    return { pes: pes.slice(me * L, (me + 1) * L), worlds: shards.map(() => world), ranks: shards.map((_, i) => me * L + i), shape: shapeOf(world) };
  }
  const shape = flatShape(m, name, p, arr);
  return {
    pes: shards.map((s) => peAt(me, s)),
    worlds: shards.map((s) => ({ ...shape, pes: tabulate(p, (q) => peAt(q, s)) })),
    ranks: shards.map(() => me),
    shape,
  };
}

function flatShape(m: Machine, name: string, p: number, arr: Exclude<Arrangement, { kind: 'hierarchical' }>): WorldShape {
  switch (arr.kind) {
    case 'ring':
      return { kind: 'ring_1d', w: p, h: 1 };
    case 'tree':
      return { kind: 'tree', w: p, h: 1 };
    case 'logical': {
      if (arr.topology === 'ring_1d') return { kind: 'ring_1d', w: p, h: 1 };
      if (m.sipKind === 'ring_1d') {
        throw new KernbenchError('ERR_CONFIG', `${name}: a ${arr.topology} arrangement takes its w x h grid from the topology's system.sips.w/h, got a ring_1d topology of ${m.sips} SIPs (no grid)`);
      }
      const { w, h } = m.sipGrid;
      if (p !== w * h) {
        throw new KernbenchError('ERR_CONFIG', `${name}: a ${arr.topology} arrangement needs world size = w x h = ${w} x ${h} = ${w * h} (system.sips), got world size ${p}`);
      }
      return { kind: arr.topology, w, h };
    }
    default: {
      const never: never = arr;
      throw new Error(`unknown arrangement ${JSON.stringify(never)}`);
    }
  }
}

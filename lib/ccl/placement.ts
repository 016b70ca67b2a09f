// Runs on: host threads (main too, to check a configuration before a run).
// Owns: where a collective runs — the PEs, the world each of them sees and its
// CCL rank — from this rank's tensor shards, the process group and the
// algorithm's arrangement (its meta, lib/ccl/define-algorithm.ts, and the
// ccl.yaml entry's topology and params).
//
// Group rank q runs on SIP ranks[q] (rank r owns SIP r: torch.ahbm.setDevice).
//   flat arrangements (ring, logical, tree): one world per shard position
//     (cube, pe): the PEs at that position on every member's SIP, in group-rank
//     order. Each shard is all-reduced with its peers at the same position, so
//     the result is the elementwise reduction of the ranks' whole tensors.
//   hierarchical: one world of every shard PE of every member (L per SIP);
//     each shard is a participant (seed ADR-0029's all-PE mapping).
// Every world carries the group's channel set: its traffic uses that set's rings.
import { KernbenchError } from '../errors.js';
import { gridOrProblem, type SipGrid, type SipTopologyKind } from '../topology/define-kind.js';
import { sipKind } from '../topology/kind-catalog.js';
import type { Machine } from '../topology/machine.js';
import type { AlgorithmMeta } from './define-algorithm.js';
import { HIERARCHY_ROOTS, type HierarchyRoot } from './hierarchy.js';
import type { ProcessGroup } from './process-group.js';
import { shapeOf, type World, type WorldShape } from './world.js';
import { tabulate } from '../tabulate.js';

/** How a collective's ranks are arranged into a world (`ring`: the built-in collectives' default). */
export type Arrangement = { kind: 'logical'; topology: SipTopologyKind } | { kind: 'tree' } | { kind: 'hierarchical'; root: HierarchyRoot } | { kind: 'ring' };

/**
 * The arrangement of an algorithm whose meta is `meta`, for a ccl.yaml entry
 * with `topology` and parsed `params`. ERR_CCL_ARRANGEMENT when the module does not
 * accept the topology (resolve checks this before a run; this is the guard).
 */
export function arrangementFor(meta: AlgorithmMeta, module: string, topology: SipTopologyKind, params: Readonly<Record<string, unknown>>): Arrangement {
  if (!meta.topologies.includes(topology)) {
    throw new KernbenchError('ERR_CCL_ARRANGEMENT', `CCL module '${module}' arranges ranks as ${meta.topologies.join(' or ')} (ccl.yaml topology), got '${topology}'`);
  }
  switch (meta.arrangement) {
    case 'logical':
      return { kind: 'logical', topology };
    case 'tree':
      return { kind: 'tree' };
    case 'hierarchical': {
      const root = params.root ?? 'corner';
      if (!HIERARCHY_ROOTS.includes(root as HierarchyRoot)) {
        throw new KernbenchError('ERR_CCL_ARRANGEMENT', `CCL module '${module}': a hierarchical arrangement takes params.root ${HIERARCHY_ROOTS.join('|')}, got ${JSON.stringify(root)}`);
      }
      return { kind: 'hierarchical', root: root as HierarchyRoot };
    }
    default: {
      const never: never = meta.arrangement;
      throw new Error(`unknown arrangement ${String(never)}`);
    }
  }
}

/**
 * The grid of a `kind` logical arrangement of `p` ranks on machine `m`, by the
 * kind's grid rule (lib/topology/kinds/<kind>.ts): a kind that lays out p ranks
 * by itself (a 1-D kind: p x 1) takes that; one that needs a w x h grid (2-D)
 * takes the topology file's system.sips.w/h, and needs one rank per grid position.
 * Otherwise why not, and what to blame: the entry's `topology` (the file has no
 * grid) or the world size.
 */
export function logicalGrid(m: Machine, kind: SipTopologyKind, p: number): { grid: SipGrid } | { problem: string; at: 'topology' | 'world_size' } {
  const k = sipKind(kind);
  const own = gridOrProblem(k.grid({ count: p }));
  if ('grid' in own) return own;
  const file = m.topology.system.sips;
  if (file.w === undefined || file.h === undefined) {
    return { problem: `a ${kind} arrangement takes its w x h grid from the topology's system.sips.w/h, got a ${m.sipKind} topology of ${m.sips} SIPs (no grid)`, at: 'topology' };
  }
  const { w, h } = file;
  if (p !== w * h) return { problem: `a ${kind} arrangement needs world size = w x h = ${w} x ${h} = ${w * h} (system.sips), got world size ${p}`, at: 'world_size' };
  const onFile = gridOrProblem(k.grid({ count: p, w, h }));
  if ('grid' in onFile) return onFile;
  return { problem: `a ${kind} arrangement on the topology's ${w} x ${h} SIP grid: ${onFile.problem}`, at: 'topology' };
}

/** Why a `kind` logical arrangement of `p` ranks cannot run on machine `m` (logicalGrid), or undefined when it can. */
export function logicalGridProblem(m: Machine, kind: SipTopologyKind, p: number): string | undefined {
  const r = logicalGrid(m, kind, p);
  return 'problem' in r ? r.problem : undefined;
}

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
 * `shards` on its SIP (every member must use the same layout). The placement depends
 * only on the machine, the group, `me`, the arrangement and the shards' positions, and
 * nobody changes it: the one made for the same of these is given again (a rank's
 * collectives in a loop placed the same worlds each call; decision 0285).
 */
export function placeCollective(m: Machine, name: string, shards: readonly ShardPosition[], group: ProcessGroup, me: number, arr: Arrangement): CollectivePlacement {
  let key = `${me}|${arrangementKey(arr)}`;
  for (const s of shards) key += `|${s.cube}:${s.pe}`;
  let memo = placedOf.get(group);
  if (memo === undefined || memo.m !== m) placedOf.set(group, (memo = { m, placed: new Map() }));
  const known = memo.placed.get(key);
  if (known !== undefined) return known;
  if (new Set(shards.map((s) => `${s.cube}:${s.pe}`)).size !== shards.length) {
    throw new KernbenchError('ERR_SHARED_PE', `${name}: two shards share a PE; give each PE one shard (DPPolicy numPes), got shards at ${shards.map((s) => `(cube ${s.cube}, pe ${s.pe})`).join(' ')}`);
  }
  const placed = place(m, name, shards, group, me, arr);
  memo.placed.set(key, placed);
  return placed;
}

/** What a placement reads of an arrangement, as text (not JSON's, which a call's key paid for each collective). */
function arrangementKey(arr: Arrangement): string {
  switch (arr.kind) {
    case 'logical':
      return `logical:${arr.topology}`;
    case 'hierarchical':
      return `hierarchical:${arr.root}`;
    default:
      return arr.kind;
  }
}

/** Placements made, by group: a rank's, whose session's objects it lives and dies with. */
const placedOf = new WeakMap<ProcessGroup, { m: Machine; placed: Map<string, CollectivePlacement> }>();

function place(m: Machine, name: string, shards: readonly ShardPosition[], group: ProcessGroup, me: number, arr: Arrangement): CollectivePlacement {
  const peAt = (q: number, s: ShardPosition): number => m.peId({ sip: group.globalRank(q), cube: s.cube, pe: s.pe });
  const p = group.size;
  if (arr.kind === 'hierarchical') {
    const L = shards.length;
    const pes: number[] = [];
    for (let q = 0; q < p; q++) for (const s of shards) pes.push(peAt(q, s));
    const world: World = { kind: 'hierarchical', w: L, h: p, pes, levels: { cubeOf: shards.map((s) => s.cube), cubeMesh: { ...m.cubeMesh }, root: arr.root }, set: group.set };
    return { pes: pes.slice(me * L, (me + 1) * L), worlds: shards.map(() => world), ranks: shards.map((_, i) => me * L + i), shape: shapeOf(world) };
  }
  const shape = flatShape(m, name, p, arr);
  return {
    pes: shards.map((s) => peAt(me, s)),
    worlds: shards.map((s) => ({ ...shape, pes: worldPes(m, group, s, () => tabulate(p, (q) => peAt(q, s))), set: group.set })),
    ranks: shards.map(() => me),
    shape,
  };
}

/**
 * The PEs of a flat world over `group` at shard position `s`: p numbers, the same for every
 * member, so one list per machine, group member list and position on a thread (the
 * world group's member list is one per thread: ProcessGroup). A list per rank was p^2
 * numbers a thread, 2 GiB at p = 16384 (decision 0127). Not frozen: a launch onto the
 * thread's own PE hands its ports over with this list (decision 0283), and a peer's send
 * reads it a message, which V8 does through a generic call on a frozen array (decision 0281).
 */
function worldPes(m: Machine, group: ProcessGroup, s: ShardPosition, make: () => number[]): number[] {
  let byGroup = worldPesOf.get(m);
  if (byGroup === undefined) worldPesOf.set(m, (byGroup = new WeakMap()));
  let byPosition = byGroup.get(group.ranks);
  if (byPosition === undefined) byGroup.set(group.ranks, (byPosition = new Map()));
  const key = `${s.cube}:${s.pe}`;
  let pes = byPosition.get(key);
  if (pes === undefined) byPosition.set(key, (pes = make()));
  return pes;
}
const worldPesOf = new WeakMap<Machine, WeakMap<readonly number[], Map<string, number[]>>>();

function flatShape(m: Machine, name: string, p: number, arr: Exclude<Arrangement, { kind: 'hierarchical' }>): WorldShape {
  switch (arr.kind) {
    case 'ring':
      return { kind: 'ring_1d', w: p, h: 1 };
    case 'tree':
      return { kind: 'tree', w: p, h: 1 };
    case 'logical': {
      const r = logicalGrid(m, arr.topology, p);
      if ('problem' in r) throw new KernbenchError('ERR_CCL_ARRANGEMENT', `${name}: ${r.problem}`);
      return { kind: arr.topology, w: r.grid.w, h: r.grid.h };
    }
    default: {
      const never: never = arr;
      throw new Error(`unknown arrangement ${JSON.stringify(never)}`);
    }
  }
}

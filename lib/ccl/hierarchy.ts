// Runs on: any thread (hosts build hierarchical worlds with it; kernels and the
// IPCQ address lookup read it). Owns: the shape of a hierarchical collective
// (seed ADR-0029, and ADR-0032's centre root): how the L PEs that hold a
// tensor on each SIP are wired into one reduction tree per SIP, and which of
// them (the gateway) joins the ring of SIPs.
//
// The tree is a pure function of (cubeOf, cube mesh, root rule, number of SIPs),
// so every thread derives the same one; plans are memoised per levels object.
//
// Construction (docs/algorithms/hierarchical_allreduce.md has a picture):
//   root cube  corner: the tensor's first cube; center: the used cube with the
//              smallest greatest Manhattan distance to the other used cubes
//              (then smallest sum, then lowest index): fewest cube_cube hops.
//   gateway    the root cube's first PE. With more than one SIP it spends
//              east/west on the SIP ring (east = next SIP, west = previous).
//   cubes      in order of (hops from the root cube, index). A cube's first PE
//              (its leader) hangs under the already-placed PE with a free
//              direction that is fewest cube hops away, then shallowest, then
//              lowest index. Its other PEs form a binary heap under the leader
//              (PE i's parent is PE (i - 1) >> 1 of the cube), so every PE keeps
//              at least one direction free for a child cube.
// Each link takes the lowest free direction at both ends (east, west, north,
// south); a PE has four, which bounds its degree.
import { KernbenchError } from '../errors.js';

export const HIERARCHY_ROOTS = ['corner', 'center'] as const;
export type HierarchyRoot = (typeof HIERARCHY_ROOTS)[number];

/** What a hierarchical world knows beyond its PEs: where each local PE sits. */
export interface HierarchyLevels {
  /** Cube (row-major in the SIP's cube mesh) of each local PE, in shard order. */
  cubeOf: number[];
  /** The SIP's cube mesh, for cube_cube hop distances. */
  cubeMesh: { w: number; h: number };
  /** Where the SIP's tree is rooted. */
  root: HierarchyRoot;
}

/** Markers in a plan's neighbour table for the gateway's links to the next / previous SIP. */
export const RING_NEXT = -2;
export const RING_PREV = -3;

export interface HierarchyPlan {
  /** Local index of the PE that joins the SIP ring (the tree's root). */
  gateway: number;
  rootCube: number;
  /** Local index of each PE's parent (-1 for the gateway). */
  parent: number[];
  /** Direction, at the child, of the link to its parent (-1 for the gateway). */
  parentDir: number[];
  /** Each PE's children with the direction (at the parent) of the link, in link order. */
  children: { local: number; dir: number }[][];
  /** Links of each PE by direction: a local index, RING_NEXT / RING_PREV, or -1. */
  neighbours: number[][];
  /** Number of links between each PE and the gateway. */
  depth: number[];
}

const plans = new WeakMap<HierarchyLevels, Map<number, HierarchyPlan>>();

/** The wiring of one SIP's PEs for `sips` SIPs (memoised per levels object). */
export function hierarchyPlan(levels: HierarchyLevels, sips: number): HierarchyPlan {
  let bySips = plans.get(levels);
  if (!bySips) {
    bySips = new Map();
    plans.set(levels, bySips);
  }
  let plan = bySips.get(sips);
  if (!plan) {
    plan = buildPlan(levels, sips);
    bySips.set(sips, plan);
  }
  return plan;
}

/** Manhattan distance between two cubes of a `w`-wide mesh. */
function cubeHops(w: number, a: number, b: number): number {
  return Math.abs((a % w) - (b % w)) + Math.abs(Math.floor(a / w) - Math.floor(b / w));
}

/** The root cube under `root` for the cubes a tensor uses. */
export function rootCube(levels: HierarchyLevels): number {
  if (levels.root === 'corner') return levels.cubeOf[0];
  const w = levels.cubeMesh.w;
  const used = [...new Set(levels.cubeOf)].sort((a, b) => a - b);
  let best = used[0];
  let bestKey = [Infinity, Infinity];
  for (const c of used) {
    const d = used.map((u) => cubeHops(w, c, u));
    const key = [Math.max(...d), d.reduce((a, b) => a + b, 0)];
    if (key[0] < bestKey[0] || (key[0] === bestKey[0] && key[1] < bestKey[1])) {
      best = c;
      bestKey = key;
    }
  }
  return best;
}

function buildPlan(levels: HierarchyLevels, sips: number): HierarchyPlan {
  const { cubeOf, cubeMesh } = levels;
  const L = cubeOf.length;
  const nCubes = cubeMesh.w * cubeMesh.h;
  if (L === 0 || cubeOf.some((c) => !Number.isInteger(c) || c < 0 || c >= nCubes)) {
    throw new KernbenchError('ERR_INTERNAL', `a hierarchy needs at least one PE, each in a cube of the ${cubeMesh.w}x${cubeMesh.h} mesh, got cubes [${cubeOf.join(', ')}]`);
  }
  const w = cubeMesh.w;
  const root = rootCube(levels);
  const members = new Map<number, number[]>();
  cubeOf.forEach((c, i) => {
    const m = members.get(c);
    if (m) m.push(i);
    else members.set(c, [i]);
  });
  const order = [...members.keys()].sort((a, b) => cubeHops(w, root, a) - cubeHops(w, root, b) || a - b);

  const neighbours = Array.from({ length: L }, () => [-1, -1, -1, -1]);
  const parent = new Array<number>(L).fill(-1);
  const parentDir = new Array<number>(L).fill(-1);
  const depth = new Array<number>(L).fill(0);
  const children: { local: number; dir: number }[][] = Array.from({ length: L }, () => []);
  const gateway = (members.get(root) as number[])[0];
  if (sips > 1) {
    neighbours[gateway][0] = RING_NEXT;
    neighbours[gateway][1] = RING_PREV;
  }
  const freeDir = (i: number): number => neighbours[i].indexOf(-1);
  const link = (p: number, c: number): void => {
    const dp = freeDir(p), dc = freeDir(c);
    if (dp < 0 || dc < 0) throw new KernbenchError('ERR_INTERNAL', `hierarchy: no free direction to link local PE ${p} to ${c}, got neighbours ${JSON.stringify(neighbours)}`);
    neighbours[p][dp] = c;
    neighbours[c][dc] = p;
    parent[c] = p;
    parentDir[c] = dc;
    depth[c] = depth[p] + 1;
    children[p].push({ local: c, dir: dp });
  };

  const placed: number[] = [];
  for (const cube of order) {
    const mem = members.get(cube) as number[];
    if (cube !== root) {
      let best = -1;
      let bestKey: number[] = [];
      for (const q of placed) {
        if (freeDir(q) < 0) continue;
        const key = [cubeHops(w, cubeOf[q], cube), depth[q], q];
        if (best < 0 || key[0] < bestKey[0] || (key[0] === bestKey[0] && (key[1] < bestKey[1] || (key[1] === bestKey[1] && key[2] < bestKey[2])))) {
          best = q;
          bestKey = key;
        }
      }
      if (best < 0) throw new KernbenchError('ERR_INTERNAL', `hierarchy: no placed PE has a free direction for cube ${cube}, got neighbours ${JSON.stringify(neighbours)}`);
      link(best, mem[0]);
    }
    placed.push(mem[0]);
    for (let j = 1; j < mem.length; j++) {
      link(mem[(j - 1) >> 1], mem[j]);
      placed.push(mem[j]);
    }
  }
  return { gateway, rootCube: root, parent, parentDir, children, neighbours, depth };
}

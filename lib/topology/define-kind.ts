// Runs on: any thread. Owns: what a SIP topology kind is — the one module
// that says how SIPs are laid out and linked (ring_1d, torus_2d, ...) — and
// defineSipTopology, which checks and freezes it. The kind catalog
// (./kind-catalog.ts), the topology file's schema (./schema.ts), the machine's
// routes (./machine.ts), placement's grid rule and the CCL worlds'
// neighbours (lib/ccl/placement.ts, lib/ccl/world.ts) read only this.
//
// A kind module is one file in lib/topology/kinds/, named after the kind, that exports
//   kind = defineSipTopology({ name, summary, grid, hops, neighbour })
//   grid(sips)            the grid rule: the topology file's system.sips {count, w?, h?}
//                         -> its {w, h} grid (SIP s sits at x = s % w, y = floor(s / w)),
//                         or a problem (a sentence ending with what was received)
//   hops(a, b, grid)      the shortest hop count from SIP a to SIP b (the route a
//                         sip_sip transfer pays: hops * alpha + bytes / beta, docs/timing.md)
//   neighbour(r, d, grid) the neighbour of rank r in direction d (0 east, 1 west,
//                         2 north, 3 south) when a collective's ranks are arranged as
//                         this kind on `grid`, or -1 where there is none
//   route?(a, b, grid)    optional: the directions, in order, of the links a transfer
//                         from SIP a to SIP b crosses (the link leaving SIP s in
//                         direction d is one physical link, lib/topology/links.ts);
//                         its length must be hops(a, b). A kind without it gets
//                         bfsRoute: the lexicographically smallest shortest
//                         direction sequence over its neighbours.
// A switched kind (decision 0050) has links that are not directions: SIPs on
// switches, or a link per pair. It exports instead
//   fabric(sips, params)  its physical links and routes (./fabric.ts SipFabric) for
//                         `sips` SIPs, or a problem; routes give the hops, so
//                         `hops` and `route` are left out
//   neighbour             still: a collective's ranks arranged as this kind
//                         (a ccl.yaml entry naming it) see these neighbours; the
//                         shipped switched kinds give the ring order over ranks
// and either kind may export
//   params                a zod object schema of the file's system.sips.params
//                         (the kind's own settings: a fat tree's leaf size, ...)
//   diagram               a picture of the kind, lines of text (`kernbench list`)
// A kind module imports this file only: the catalog imports the kinds while it
// loads (top-level await), so a kind that imported the catalog would wait on itself.
import type { z } from 'zod';
import { KernbenchError } from '../errors.js';
import type { SipFabric } from './fabric.js';

/**
 * A kind's name: snake_case with at least one `_` (a shape and its dimension,
 * `ring_1d`), so it can never be one of the CCL arrangements that are not
 * topology kinds (`tree`, `none`, `hierarchical`), and types can tell them apart.
 */
export type SipTopologyKind = `${string}_${string}`;

const NAME = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;

/** A grid of SIPs (or of CCL ranks): `w x h`, index = y * w + x. */
export interface SipGrid {
  readonly w: number;
  readonly h: number;
}

/** The topology file's `system.sips`, as the grid rule sees it. */
export interface SipCount {
  readonly count: number;
  readonly w?: number;
  readonly h?: number;
}

/**
 * What a grid rule returns when the SIPs cannot be laid out: a sentence ending
 * with what was received; `at` names the field of system.sips it is about
 * (default: the whole system.sips mapping).
 */
export type GridProblem = string | { readonly problem: string; readonly at: 'count' | 'w' | 'h' | 'params' };

/** Direction indices (lib/shm/layout.ts DIRECTIONS). */
export const EAST = 0;
export const WEST = 1;
export const NORTH = 2;
export const SOUTH = 3;

export interface SipTopologyDefinition {
  readonly name: string;
  /** One line for `kernbench list`, docs and errors. */
  readonly summary: string;
  grid(sips: SipCount): SipGrid | GridProblem;
  /** Shortest hop count from SIP a to SIP b: a direction kind's (a switched kind's routes give it). */
  hops?(a: number, b: number, grid: SipGrid): number;
  neighbour(rank: number, dir: number, grid: SipGrid): number;
  /** Optional: the directions of the links from SIP a to SIP b, in order (length hops(a, b)); default bfsRoute. */
  route?(a: number, b: number, grid: SipGrid): number[];
  /** A switched kind: its links and routes for `sips` SIPs and its parsed params (./fabric.ts), or why not. */
  fabric?(sips: number, params: Readonly<Record<string, unknown>>): SipFabric | GridProblem;
  /** Schema of system.sips.params (a zod object); without it the kind takes none. */
  params?: z.ZodObject;
  /** A picture of the kind for `kernbench list`: lines of text. */
  diagram?: readonly string[];
}

/** A checked, frozen kind. */
export interface SipTopology extends SipTopologyDefinition {
  readonly name: SipTopologyKind;
}

/** Why `v` is not a kind definition, or [] when it is one. */
function contractProblems(v: unknown): string[] {
  if (typeof v !== 'object' || v === null) return [`expected an object, got ${v === null ? 'null' : typeof v}`];
  const d = v as Record<string, unknown>;
  const bad: string[] = [];
  if (typeof d.name !== 'string' || !NAME.test(d.name)) bad.push(`name: expected snake_case with at least one '_' (ring_1d, mesh_2d_no_wrap), got ${JSON.stringify(d.name)}`);
  if (typeof d.summary !== 'string' || d.summary.length === 0 || d.summary.includes('\n')) bad.push(`summary: expected one non-empty line, got ${JSON.stringify(d.summary)}`);
  for (const [f, arity] of [['grid', 1], ['neighbour', 3]] as const) {
    if (typeof d[f] !== 'function') bad.push(`${f}: expected a function of ${arity} argument(s), got ${typeof d[f]}`);
  }
  if (d.fabric !== undefined && typeof d.fabric !== 'function') bad.push(`fabric: expected a function of 2 arguments or nothing, got ${typeof d.fabric}`);
  // A direction kind's hop count is its own; a switched kind's comes from its routes.
  if (d.fabric === undefined && typeof d.hops !== 'function') bad.push(`hops: expected a function of 3 arguments (or a fabric), got ${typeof d.hops}`);
  if (d.fabric !== undefined && (d.hops !== undefined || d.route !== undefined)) bad.push(`hops, route: a kind with a fabric takes its hops and routes from it, got ${d.hops !== undefined ? 'hops' : 'route'} too`);
  if (d.route !== undefined && typeof d.route !== 'function') bad.push(`route: expected a function of 3 arguments or nothing, got ${typeof d.route}`);
  const ps = d.params as { safeParse?: unknown; shape?: unknown } | undefined;
  if (ps !== undefined && (typeof ps !== 'object' || ps === null || typeof ps.safeParse !== 'function' || typeof ps.shape !== 'object')) bad.push(`params: expected a zod object schema (z.object({...})) or nothing, got ${typeof ps}`);
  const pic = d.diagram;
  if (pic !== undefined && (!Array.isArray(pic) || pic.some((l) => typeof l !== 'string' || l.includes('\n')))) bad.push(`diagram: expected an array of one-line strings or nothing, got ${JSON.stringify(pic)}`);
  return bad;
}

/** Check and freeze a kind; a bad one is ERR_MODULE_DEFINITION naming each field. */
export function defineSipTopology(def: SipTopologyDefinition): SipTopology {
  const bad = contractProblems(def);
  if (bad.length > 0) throw new KernbenchError('ERR_MODULE_DEFINITION', `defineSipTopology: ${bad.join('; ')}`);
  const { name, summary, grid, hops, neighbour, route, fabric, params, diagram } = def;
  return Object.freeze({
    name: name as SipTopologyKind,
    summary,
    grid,
    neighbour,
    ...(hops ? { hops } : {}),
    ...(route ? { route } : {}),
    ...(fabric ? { fabric } : {}),
    ...(params ? { params } : {}),
    ...(diagram ? { diagram: Object.freeze([...diagram]) } : {}),
  });
}

/** Is `v` a kind defineSipTopology would accept (the export check of a kind module)? */
export function isSipTopology(v: unknown): v is SipTopology {
  return contractProblems(v).length === 0;
}

/** The grid or the problem a grid rule returned, told apart. */
export function gridOrProblem(r: SipGrid | GridProblem): { grid: SipGrid } | { problem: string; at?: 'count' | 'w' | 'h' | 'params' } {
  if (typeof r === 'string') return { problem: r };
  if ('problem' in r) return { problem: r.problem, at: r.at };
  return { grid: r };
}

// Grid rules the shipped kinds share; a kind may use one or write its own.

/** A 1-D kind: the SIPs in a row of `count`; a w/h in the file is a mistake. */
export function rowGrid(kind: string, sips: SipCount): SipGrid | GridProblem {
  if (sips.w !== undefined || sips.h !== undefined) return { problem: `${kind} takes no w/h grid, got w=${sips.w} h=${sips.h}`, at: 'w' };
  return { w: sips.count, h: 1 };
}

/**
 * The ranks of a switched kind, arranged as a collective sees them: a ring in
 * rank order (east = r + 1, west = r - 1, mod n; no north or south). On a switch
 * every pair is one route apart, so "neighbour" is a choice, not a wire; the
 * ring is the one today's neighbour collectives run on (decision 0050).
 */
export function ringNeighbour(rank: number, dir: number, grid: SipGrid): number {
  const n = grid.w * grid.h;
  if (dir === EAST) return (rank + 1) % n;
  if (dir === WEST) return (rank - 1 + n) % n;
  return -1;
}

/** A 2-D kind: the file's explicit w x h grid, which must hold every SIP once. */
export function explicitGrid(kind: string, sips: SipCount): SipGrid | GridProblem {
  if (sips.w === undefined || sips.h === undefined) {
    const missing = sips.w === undefined && sips.h === undefined ? 'w and h' : sips.w === undefined ? `w (h is ${sips.h})` : `h (w is ${sips.w})`;
    return { problem: `${kind} needs an explicit w x h grid, got count ${sips.count} without ${missing}`, at: sips.w === undefined ? 'w' : 'h' };
  }
  if (sips.w * sips.h !== sips.count) return { problem: `w x h must equal count (${sips.w} x ${sips.h} = ${sips.w * sips.h}), got ${sips.count}`, at: 'count' };
  return { w: sips.w, h: sips.h };
}

/** Position (x, y) of index `i` on `grid`. */
export function xy(i: number, grid: SipGrid): { x: number; y: number } {
  return { x: i % grid.w, y: Math.floor(i / grid.w) };
}

/** The grid position one step from `rank` in `dir`: {x, y} before any wrap or edge check. */
export function step(rank: number, dir: number, grid: SipGrid): { x: number; y: number } {
  const { x, y } = xy(rank, grid);
  if (dir === EAST) return { x: x + 1, y };
  if (dir === WEST) return { x: x - 1, y };
  if (dir === NORTH) return { x, y: y - 1 };
  return { x, y: y + 1 };
}

/**
 * Dimension-order route on a w x h grid: x first, then y, each dimension the
 * shorter way round when it wraps (`wrap`), else the only way. Tie rule (a
 * wrapping dimension of even size whose two ways are equally long): the way
 * with the lower direction index, east for x, north for y. Then the route is
 * the lexicographically smallest shortest direction sequence (east 0 < west 1
 * < north 2 < south 3), exactly what bfsRoute derives from the neighbours, so
 * a shipped kind's route and the fallback agree (test/topology-links.test.ts).
 */
export function dimensionOrderRoute(a: number, b: number, grid: SipGrid, wrap: boolean): number[] {
  // The steps of each axis counted first and the array made at its size, with no closure or
  // {x, y}: an all-to-all asks for a route per piece once its pairs outnumber the route memo.
  const x = axisSteps(a % grid.w, b % grid.w, grid.w, wrap, true);
  const y = axisSteps(Math.floor(a / grid.w), Math.floor(b / grid.w), grid.h, wrap, false);
  const nx = Math.abs(x), ny = Math.abs(y);
  const dx = x > 0 ? EAST : WEST, dy = y > 0 ? SOUTH : NORTH;
  const dirs = new Array<number>(nx + ny);
  for (let i = 0; i < nx; i++) dirs[i] = dx;
  for (let i = 0; i < ny; i++) dirs[nx + i] = dy;
  return dirs;
}

/** Signed steps along one axis from `from` to `to` (positive: the increasing way), with wrap the shorter way, a tie the positive way when `tiePositive`. */
function axisSteps(from: number, to: number, size: number, wrap: boolean, tiePositive: boolean): number {
  if (!wrap) return to - from;
  const fwd = (to - from + size) % size; // steps the positive way (with wrap)
  const back = (size - fwd) % size;
  return fwd < back || (fwd === back && tiePositive) ? fwd : -back;
}

/**
 * The route a kind without `route` gets: a shortest path over its neighbour
 * links (breadth-first from b over the reversed links), choosing at each SIP
 * the lowest direction index that stays on a shortest path. That is the
 * lexicographically smallest shortest direction sequence: a pure function of
 * the kind's neighbours, so every thread derives the same route. Cost: one BFS
 * over the grid per (a, b); callers memoise (lib/topology/links.ts).
 * Returns null when b cannot be reached from a.
 */
export function bfsRoute(kind: Pick<SipTopologyDefinition, 'neighbour'>, a: number, b: number, grid: SipGrid): number[] | null {
  const n = grid.w * grid.h;
  const dist = new Int32Array(n).fill(-1);
  // Reverse adjacency: who reaches s in one link.
  const into: number[][] = Array.from({ length: n }, () => []);
  for (let s = 0; s < n; s++) {
    for (let d = 0; d < 4; d++) {
      const t = kind.neighbour(s, d, grid);
      if (t >= 0) into[t].push(s);
    }
  }
  dist[b] = 0;
  const queue = [b];
  for (let i = 0; i < queue.length; i++) {
    const t = queue[i];
    for (const s of into[t]) {
      if (dist[s] < 0) {
        dist[s] = dist[t] + 1;
        queue.push(s);
      }
    }
  }
  if (dist[a] < 0) return null;
  const dirs: number[] = [];
  for (let s = a; s !== b; ) {
    let next = -1;
    for (let d = 0; d < 4 && next < 0; d++) {
      const t = kind.neighbour(s, d, grid);
      if (t >= 0 && dist[t] === dist[s] - 1) {
        dirs.push(d);
        next = t;
      }
    }
    s = next;
  }
  return dirs;
}

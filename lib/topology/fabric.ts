// Runs on: any thread. Owns: a SIP fabric — the directed physical links
// between SIPs (and the switches between them, if any) and the route from any
// SIP to any other as a list of those links. Decision 0050.
//
// Every kind has one. A direction kind (ring_1d, torus_2d, ...: SIPs linked
// to up to four neighbours) gets `directionFabric`: link `sip * 4 + dir` is
// the link leaving SIP `sip` in direction dir (0 E, 1 W, 2 N, 3 S), routes
// from the kind's `route` or bfsRoute. A switched kind (fully_connected,
// single_switch, fat_tree_2l) builds its own from its `fabric` function.
//
// Nodes: SIPs are nodes 0 .. sips - 1, switches sips .. sips + switches - 1.
// A link id names no link when its `ends(...).to` is -1 (a direction with no
// neighbour); such ids are never on a route.
//
// The fabric is functional (ends and routes computed on demand, routes
// memoised per SIP pair, a bounded number of them, by `memoRoutes`) so that a
// 1024-SIP fully connected fabric costs no million-entry table.
import { KernbenchError } from '../errors.js';
import { bfsRoute, type GridProblem, type SipGrid, type SipTopologyDefinition } from './define-kind.js';
import { PairCache } from './pair-cache.js';

/** One directed link of a fabric: node to node (-1: the id names no link). */
export interface FabricEnds {
  readonly from: number;
  readonly to: number;
}

export interface SipFabric {
  /** Switch nodes: sips .. sips + switches - 1. */
  readonly switches: number;
  /** Number of link ids, 0 .. linkCount - 1 (some may name no link). */
  readonly linkCount: number;
  /** Where link `id` goes. */
  ends(id: number): FabricEnds;
  /**
   * Link `id`'s bandwidth as a multiple of timing.links.sip_sip's (default 1): a
   * fat tree's leaf-spine links under oversubscription. Every link pays the
   * class's latency once per hop.
   */
  bandwidthScale?(id: number): number;
  /** The link ids, in order, a transfer from SIP a to SIP b crosses ([] when a = b). */
  route(a: number, b: number): readonly number[];
  /** A node's name in a picture or a SimGrid platform ("sip 3", "leaf 1", "switch"). */
  nodeName?(node: number): string;
}

/** The fabric or the problem a kind's `fabric` returned, told apart. */
export function fabricOrProblem(r: SipFabric | GridProblem): { fabric: SipFabric } | { problem: string; at?: 'count' | 'w' | 'h' | 'params' } {
  if (typeof r === 'string') return { problem: r };
  if ('problem' in r) return { problem: r.problem, at: r.at };
  return { fabric: r };
}

/**
 * `route` memoised per (a, b): a pure function asked on every transfer. The memo is
 * bounded (./pair-cache.ts): an all-to-all asks for every pair of SIPs, p^2 routes, each
 * for a few pieces, and kept they filled a Map of p^2 entries in every thread (decision 0269).
 */
export function memoRoutes(sips: number, route: (a: number, b: number) => number[]): (a: number, b: number) => readonly number[] {
  const kept = new PairCache<readonly number[]>(sips);
  return (a, b) => {
    let r = kept.get(a, b);
    if (r === undefined) {
      // A copy, so that the kind's own array is not the one kept; read-only by its type, not frozen: see Links.route.
      r = a === b ? [] : [...route(a, b)];
      kept.set(a, b, r);
    }
    return r;
  };
}

/** The fabric of a direction kind on `grid`: link `sip * 4 + dir`, routes from the kind's route or bfsRoute. */
export function directionFabric(kind: Pick<SipTopologyDefinition, 'name' | 'neighbour' | 'route'>, grid: SipGrid): SipFabric {
  const sips = grid.w * grid.h;
  return {
    switches: 0,
    linkCount: 4 * sips,
    ends: (id) => {
      const sip = Math.floor(id / 4);
      return { from: sip, to: kind.neighbour(sip, id % 4, grid) };
    },
    route: memoRoutes(sips, (a, b) => {
      const dirs = kind.route ? kind.route(a, b, grid) : bfsRoute(kind, a, b, grid);
      if (dirs === null) throw new KernbenchError('ERR_NO_ROUTE', `no route from SIP ${a} to SIP ${b} over the ${kind.name} links, got grid ${grid.w} x ${grid.h}`);
      // Indexed, not for-of: an all-to-all asks for a route per piece once its pairs outnumber the memo's slots.
      const out = new Array<number>(dirs.length);
      let s = a;
      for (let i = 0; i < dirs.length; i++) {
        const d = dirs[i];
        out[i] = s * 4 + d;
        s = kind.neighbour(s, d, grid);
      }
      return out;
    }),
  };
}

/**
 * The deterministic multipath choice of a switched fabric: which of `ways`
 * equal-cost next hops a flow from SIP a to SIP b takes (ECMP by a hash of the
 * ordered pair). The hash is a fixed integer function (a 32-bit multiply-xorshift
 * mix of a and b, the finaliser of MurmurHash3), so every thread, run and
 * platform picks the same way; a -> b and b -> a may take different ways.
 */
export function ecmpWay(a: number, b: number, ways: number): number {
  let h = Math.imul(a + 1, 0x9e3779b1) ^ Math.imul(b + 1, 0x85ebca77);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % ways;
}

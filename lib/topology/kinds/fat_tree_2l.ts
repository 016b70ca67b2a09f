// Runs on: any thread. Owns: the fat_tree_2l SIP topology kind — a two-level
// fat tree (leaf-spine): SIPs on leaf switches, `sips_per_leaf` each, and every
// leaf linked to every one of `spines` spine switches.
//
// Links (all directed, each paying timing.links.sip_sip's latency once):
//   SIP s <-> its leaf            sip_sip bandwidth B
//   leaf  <-> spine, each pair    B * sips_per_leaf / (oversubscription * spines):
//                                 a leaf's links up carry 1 / oversubscription of
//                                 what its SIPs can send into it (1: full bisection)
// Routing rule (decision 0050): within a leaf, up(a) then down(b) (2 hops);
// between leaves, up(a), leaf(a) -> spine j, spine j -> leaf(b), down(b) (4 hops),
// where j = ecmpWay(a, b, spines) (./fabric.ts): ECMP by a fixed hash of the
// ordered pair, so a flow's spine is one pure function of its ends.
//
// Its params schema is built on the main thread only, which checks the topology
// file (../../zod-on-main.ts): another thread builds the fabric from the params
// main checked, with the same defaults, and loads no zod for it (decision 0228).
import { zodOnMain as z } from '../../zod-on-main.js';
import { defineSipTopology, ringNeighbour, rowGrid } from '../define-kind.js';
import { ecmpWay, memoRoutes } from '../fabric.js';

/** What a param not given is. */
const DEFAULTS = { sips_per_leaf: 4, spines: 2, oversubscription: 1 };

const Params = z === undefined ? undefined : z.strictObject({
  /** SIPs on each leaf switch; count must be a multiple of it. */
  sips_per_leaf: z.number().int().positive().default(DEFAULTS.sips_per_leaf),
  /** Spine switches; every leaf has one link up to (and down from) each. */
  spines: z.number().int().positive().default(DEFAULTS.spines),
  /** A leaf's SIP-facing bandwidth over its spine-facing bandwidth (1: non-blocking, 2: 2:1, ...). */
  oversubscription: z.number().positive().default(DEFAULTS.oversubscription),
});

export const kind = defineSipTopology({
  name: 'fat_tree_2l',
  summary: 'a two-level fat tree: SIPs on leaf switches, every leaf on every spine (system.sips.params)',
  grid: (sips) => rowGrid('fat_tree_2l', sips),
  neighbour: ringNeighbour,
  params: Params,
  // Nodes: SIPs 0 .. n - 1, leaves n .. n + L - 1, spines n + L .. n + L + S - 1.
  // Links: 2s SIP s -> its leaf, 2s + 1 back; then from 2n, per (leaf l, spine j):
  // 2n + 2(l S + j) leaf l -> spine j, and + 1 spine j -> leaf l.
  fabric: (n, params) => {
    const { sips_per_leaf: k, spines: S, oversubscription: o } = Params ? Params.parse(params) : { ...DEFAULTS, ...(params as Partial<typeof DEFAULTS>) };
    if (n % k !== 0) return { problem: `fat_tree_2l puts sips_per_leaf = ${k} SIPs on each leaf: count must be a multiple of ${k}, got ${n}`, at: 'count' };
    const L = n / k;
    const base = 2 * n;
    const leafOf = (s: number): number => Math.floor(s / k);
    return {
      switches: L + S,
      linkCount: base + 2 * L * S,
      ends: (l) => {
        if (l < base) return l % 2 === 0 ? { from: l / 2, to: n + leafOf(l / 2) } : { from: n + leafOf((l - 1) / 2), to: (l - 1) / 2 };
        const q = Math.floor((l - base) / 2);
        const leaf = n + Math.floor(q / S), spine = n + L + (q % S);
        return (l - base) % 2 === 0 ? { from: leaf, to: spine } : { from: spine, to: leaf };
      },
      bandwidthScale: (l) => (l < base ? 1 : k / (o * S)),
      route: memoRoutes(n, (a, b) => {
        const la = leafOf(a), lb = leafOf(b);
        if (la === lb) return [2 * a, 2 * b + 1];
        const j = ecmpWay(a, b, S);
        return [2 * a, base + 2 * (la * S + j), base + 2 * (lb * S + j) + 1, 2 * b + 1];
      }),
      nodeName: (node) => (node < n ? `sip ${node}` : node < n + L ? `leaf ${node - n}` : `spine ${node - n - L}`),
    };
  },
  diagram: [
    '     [spine 0]  ..  [spine S-1]     every leaf on every spine; leaf-spine',
    '        |    \\      /    |          links at B k / (o S) (o: oversubscription)',
    '     [leaf 0]   ..   [leaf L-1]     between leaves: up, leaf -> spine j,',
    '      / .. \\          / .. \\        spine j -> leaf, down; j = ECMP hash',
    '     0  .. k-1     n-k  ..  n-1     of (src, dst); k = sips_per_leaf',
  ],
});

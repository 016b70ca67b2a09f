// Runs on: any thread. Owns: the single_switch SIP topology kind — one
// crossbar switch with a port per SIP: each SIP has an up link to the switch
// and a down link from it, each with timing.links.sip_sip's bandwidth and
// latency (the port's), so a transfer costs 2 alpha + bytes / beta alone.
// The switch itself is non-blocking: only its ports are shared links (two
// flows into one SIP share its down link). Routing rule (decision 0050): the
// only path, up(a) then down(b).
import { defineSipTopology, ringNeighbour, rowGrid } from '../define-kind.js';
import { memoRoutes } from '../fabric.js';

export const kind = defineSipTopology({
  name: 'single_switch',
  summary: 'a crossbar switch, one port (up and down link) per SIP: 2 hops between any two; no w/h',
  grid: (sips) => rowGrid('single_switch', sips),
  neighbour: ringNeighbour,
  // Node n is the switch. Link 2s: SIP s -> switch (up); 2s + 1: switch -> SIP s (down).
  fabric: (n) => ({
    switches: 1,
    linkCount: 2 * n,
    ends: (l) => (l % 2 === 0 ? { from: l / 2, to: n } : { from: n, to: (l - 1) / 2 }),
    route: memoRoutes(n, (a, b) => [2 * a, 2 * b + 1]),
    nodeName: (node) => (node === n ? 'switch' : `sip ${node}`),
  }),
  diagram: [
    '        [ switch ]        one port per SIP: an up and a down',
    '       /   |  |   \\       link; a route is up(a), down(b)',
    '      0    1  2 .. n-1',
  ],
});

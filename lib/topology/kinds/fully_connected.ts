// Runs on: any thread. Owns: the fully_connected SIP topology kind — every
// ordered pair of SIPs has its own directed link (full duplex: a -> b and
// b -> a are two links), so every route is one hop and no two pairs share a
// link. Routing rule (decision 0050): the only link, a -> b.
import { defineSipTopology, ringNeighbour, rowGrid } from '../define-kind.js';
import { memoRoutes } from '../fabric.js';

export const kind = defineSipTopology({
  name: 'fully_connected',
  summary: 'every pair of SIPs on its own link (one hop, nothing shared); no w/h',
  grid: (sips) => rowGrid('fully_connected', sips),
  neighbour: ringNeighbour,
  // Link a * (n - 1) + (b < a ? b : b - 1) goes from SIP a to SIP b: the n - 1 links leaving a, in b order.
  fabric: (n) => {
    const id = (a: number, b: number): number => a * (n - 1) + (b < a ? b : b - 1);
    return {
      switches: 0,
      linkCount: n * (n - 1),
      ends: (l) => {
        const a = Math.floor(l / (n - 1));
        const k = l % (n - 1);
        return { from: a, to: k < a ? k : k + 1 };
      },
      route: memoRoutes(n, (a, b) => [id(a, b)]),
      nodeName: (s) => `sip ${s}`,
    };
  },
  diagram: [
    '  0 ----- 1      every pair of SIPs on its own',
    '  | \\   / |      link: a route is one hop',
    '  |   X   |',
    '  | /   \\ |',
    '  3 ----- 2',
  ],
});

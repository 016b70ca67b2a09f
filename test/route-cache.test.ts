// Runs on: main thread (tap). Covers: lib/kernel/ports.ts's RouteCache, the last
// route through a direction a flow keeps for sends and for receives (decision
// 0265): a direction not kept is a miss (it is routed through the port table), a
// kept one gives back its channel, set, peer PE and direction, sends and receives
// keep theirs apart, and another direction replaces it.
import t from 'tap';
import { RouteCache, routeThrough, type Ports } from '../lib/kernel/ports.js';

const ports: Ports = {
  size: 4,
  set: 2,
  send: [{ code: 'ERR_NO_NEIGHBOUR' }, { pe: 5, dir: 3 }, { code: 'ERR_NO_NEIGHBOUR' }, { pe: 7, dir: 1 }],
  recv: [{ code: 'ERR_NO_NEIGHBOUR' }, { pe: 6, dir: 3 }, { code: 'ERR_NO_NEIGHBOUR' }, { pe: 8, dir: 1 }],
};
const route = (r: RouteCache, to: string, d: number, use: 'send' | 'recv') => {
  const hit = r.recall(to, use);
  const { d: channel, set, pe, dir } = hit ?? r.remember(to, use, routeThrough(r, ports, d, use));
  return { hit: hit !== undefined, route: { d: channel, set, pe, dir } };
};

t.test('a flow routes a direction through its port table once, then from what it kept', async (t) => {
  const r = new RouteCache();
  t.same(route(r, 'east', 1, 'send'), { hit: false, route: { d: 1, set: 2, pe: 5, dir: 3 } });
  t.same(route(r, 'east', 1, 'send'), { hit: true, route: { d: 1, set: 2, pe: 5, dir: 3 } }, 'kept');
  t.same(route(r, 'west', 3, 'recv'), { hit: false, route: { d: 3, set: 2, pe: 8, dir: 1 } }, 'a receive keeps its own');
  t.same(route(r, 'east', 1, 'send'), { hit: true, route: { d: 1, set: 2, pe: 5, dir: 3 } }, 'the send is still kept');
  t.same(route(r, 'west', 3, 'recv'), { hit: true, route: { d: 3, set: 2, pe: 8, dir: 1 } });
  t.same(route(r, 'west', 3, 'send'), { hit: false, route: { d: 3, set: 2, pe: 7, dir: 1 } }, 'another direction replaces the send');
  t.same(route(r, 'east', 1, 'send'), { hit: false, route: { d: 1, set: 2, pe: 5, dir: 3 } });
});

t.test('a direction with no port raises its error every time: an error is never kept', async (t) => {
  const r = new RouteCache();
  route(r, 'east', 1, 'send');
  for (let i = 0; i < 2; i++) t.throws(() => route(r, 'north', 0, 'send'), { code: 'ERR_NO_NEIGHBOUR' });
  t.same(route(r, 'east', 1, 'send'), { hit: true, route: { d: 1, set: 2, pe: 5, dir: 3 } }, 'the kept route is untouched by the failure');
});

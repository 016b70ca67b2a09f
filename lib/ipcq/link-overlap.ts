// Runs on: executor threads (an outbound DMA channel's pieces), only when the plan's
// link mode is `optimistic` (timing.link_sharing: max_min with the fast path).
// Owns: the optimistic fast path of shared links — a piece's times computed by its
// channel alone, as the link model would give them to a flow that meets no other —
// and the check that no flow did meet another
// (docs/decisions/0030-optimistic-links.md).
//
// A piece is a flow on its route (lib/topology/links.ts) that pays its route's
// latency, then uses every link of the route for its bandwidth phase
// [join, end] (lib/topology/link-share.ts). Alone, its times are pure functions
// of the piece (aloneArrival), and they are what the link model gives it whenever no
// other flow's bandwidth phase overlaps its own on any of its links: the model's
// rate for a flow is its narrowest link's capacity as long as it is alone on its
// links, and a flow whose rate never changes is reported from its join alone.
//
// The check: each link keeps the latest bandwidth-phase end recorded on it (`times`,
// under a per-link lock word in `ctl`). A piece that joins before that end overlaps a
// flow recorded earlier — or, when recorded out of virtual order by another thread, a
// flow that only seems to (a false alarm costs a replay, never a wrong time). A
// channel's own pieces never trip it: the next one joins at or after the previous
// one's arrival. Two pieces that overlap are always caught, by whichever records
// second (the argument is in the decision record). Then the session aborts
// (ABORT_KIND.LINK_OVERLAP) and the bench's session is replayed with every piece
// through the coordinator's link arbiter (lib/bench/runner.ts): same times either way.
import { ABORT_KIND } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';
import { abortSession } from '../sync/scheduler.js';
import { Links } from '../topology/links.js';
import type { Machine } from '../topology/machine.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import { aloneArrivalPs, aloneRateOf, joinOf, pieceBytes, pieceStartPs } from '../topology/link-share.js';

/** A route's link ids and its narrowest link's GB/s (the piece's rate alone). */
export interface Route {
  readonly links: readonly number[];
  readonly gbPerS: number;
}

/** One per thread and session (its routes are memoised): the thread's channels share it. */
const perThread = new WeakMap<ThreadEnv, LinkOverlap>();

export function linkOverlapOf(env: ThreadEnv): LinkOverlap {
  let o = perThread.get(env);
  if (!o) perThread.set(env, (o = new LinkOverlap(env.shared, env.machine)));
  return o;
}

export class LinkOverlap {
  private readonly links: Links;
  private readonly gbPerS: Float64Array;

  constructor(
    private readonly sh: SharedState,
    m: Machine,
  ) {
    this.links = new Links(m);
    this.gbPerS = this.links.bandwidths();
  }

  /** The route from PE `from` to PE `to` and its rate alone (a channel asks once per peer). */
  route(from: number, to: number): Route {
    const links = this.links.route(from, to);
    return { links, gbPerS: aloneRateOf(links, this.gbPerS) };
  }

  /**
   * A piece on `route` (see route()), ready at `readyPs`, that takes `serialPs` alone
   * and flies `latencyPs`, entering its links no earlier than `joinMinPs`: when its last
   * byte left (the link model's sentPs for a flow alone). Records its bandwidth phase on
   * its links; if it overlaps another flow's, aborts the session (the caller carries on:
   * every wait now throws).
   */
  cross(route: Route, readyPs: number, serialPs: number, latencyPs: number, joinMinPs: number): number {
    // aloneArrival's numbers without its result object (this runs once per piece).
    const startPs = pieceStartPs(readyPs, latencyPs, joinMinPs);
    if (pieceBytes(serialPs, route.gbPerS) === 0) return startPs;
    const joinPs = joinOf(startPs, latencyPs);
    const endPs = joinPs + serialPs;
    let overlap = false;
    const links = route.links;
    for (let i = 0; i < links.length; i++) if (this.record(links[i], joinPs, endPs)) overlap = true;
    if (overlap) abortSession(this.sh, ABORT_KIND.LINK_OVERLAP);
    return aloneArrivalPs(joinPs, serialPs) - latencyPs;
  }

  /** Record [joinPs, endPs] on link `l`; true when it starts before the latest end recorded there. */
  private record(l: number, joinPs: number, endPs: number): boolean {
    const { ctl, times, layout } = this.sh;
    const lock = layout.linkLock(l);
    // Held for three loads and a store; another thread on the same link is rare (two channels' routes crossing).
    while (Atomics.compareExchange(ctl, lock, 0, 1) !== 0) Atomics.wait(ctl, lock, 1, 0.05);
    const at = layout.linkEnd(l);
    const before = times[at];
    if (endPs > before) times[at] = endPs;
    Atomics.store(ctl, lock, 0);
    return joinPs < before;
  }
}

// Runs on: executor threads (an outbound DMA channel's pieces), only when the plan's
// link mode is `optimistic` (timing.link_sharing: max_min with the fast path).
// Owns: the optimistic fast path of shared links — a piece's times computed by its
// channel alone, as the link model would give them to a flow that meets no other —
// and the check that no flow did meet another
// (docs/decisions/0030-optimistic-links.md; its check by intervals, 0075).
//
// A piece is a flow on its route (lib/topology/links.ts) that pays its route's
// latency, then uses every link of the route for its bandwidth phase
// [join, end] (lib/topology/link-share.ts). Alone, its times are pure functions
// of the piece (aloneArrival), and they are what the link model gives it whenever no
// other flow's bandwidth phase overlaps its own on any of its links: the model's
// rate for a flow is its narrowest link's capacity as long as it is alone on its
// links, and a flow whose rate never changes is reported from its join alone.
//
// The check: each link keeps the bandwidth-phase intervals recorded on it (`times`,
// LINK_INTERVALS of them sorted by join, under a per-link lock word in `ctl`). A piece
// whose interval overlaps a recorded one met that flow; one that lies wholly before or
// after every recorded interval met nobody, whatever order the threads recorded them in
// (decision 0075: comparing with the latest end instead tripped on a flow that had left
// the link before the piece entered it). When a link's intervals are full, the two with
// the smallest gap between them are merged into one that covers both: the set only ever
// grows, so a piece that overlaps any recorded interval still overlaps the set (no
// meeting is missed), and a piece in a merged gap is a false alarm (a replay, never a
// wrong time). A channel's own pieces never trip it outside such a gap: the next one
// joins at or after the previous one's arrival. Two pieces that overlap are always
// caught, by whichever records second. Then the session aborts
// (ABORT_KIND.LINK_OVERLAP) and the bench's session is replayed with every piece
// through the coordinator's link arbiter (lib/bench/runner.ts): same times either way.
import { ABORT_KIND, LINK_INTERVALS } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';
import { abortSession } from '../sync/wake.js';
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

  /** Record [joinPs, endPs] on link `l`; true when it overlaps an interval recorded there. */
  private record(l: number, joinPs: number, endPs: number): boolean {
    const { ctl, times, layout } = this.sh;
    const lock = layout.linkLock(l);
    // Held for a scan of at most LINK_INTERVALS pairs; another thread on the same link is rare (two channels' routes crossing).
    while (Atomics.compareExchange(ctl, lock, 0, 1) !== 0) Atomics.wait(ctl, lock, 1, 0.05);
    const overlap = recordInterval(times, layout.linkIntervals(l), joinPs, endPs);
    Atomics.store(ctl, lock, 0);
    return overlap;
  }
}

/**
 * Add [joinPs, endPs] to the intervals at `times[at]` (a count, then (join, end) pairs
 * sorted by join); true when it overlaps one of them (each starts before the other ends).
 * When the count would pass LINK_INTERVALS, the two neighbours with the smallest gap are
 * merged into their hull. Exported for the check's own test.
 */
export function recordInterval(times: Float64Array, at: number, joinPs: number, endPs: number): boolean {
  let n = times[at];
  let overlap = false;
  let pos = n; // where the new pair goes, by join
  for (let k = 0; k < n; k++) {
    const j = times[at + 1 + 2 * k];
    if (joinPs < times[at + 2 + 2 * k] && j < endPs) overlap = true;
    if (pos === n && joinPs < j) pos = k;
  }
  for (let k = n; k > pos; k--) {
    times[at + 1 + 2 * k] = times[at - 1 + 2 * k];
    times[at + 2 + 2 * k] = times[at + 2 * k];
  }
  times[at + 1 + 2 * pos] = joinPs;
  times[at + 2 + 2 * pos] = endPs;
  n++;
  if (n > LINK_INTERVALS) {
    // Merge the pair (k, k + 1) with the smallest gap between k's end and k + 1's join (first such pair on a tie).
    let best = 0;
    let bestGap = Infinity;
    for (let k = 0; k + 1 < n; k++) {
      const gap = times[at + 1 + 2 * (k + 1)] - times[at + 2 + 2 * k];
      if (gap < bestGap) {
        bestGap = gap;
        best = k;
      }
    }
    const e = Math.max(times[at + 2 + 2 * best], times[at + 2 + 2 * (best + 1)]);
    times[at + 2 + 2 * best] = e;
    for (let k = best + 1; k + 1 < n; k++) {
      times[at + 1 + 2 * k] = times[at + 1 + 2 * (k + 1)];
      times[at + 2 + 2 * k] = times[at + 2 + 2 * (k + 1)];
    }
    n--;
  }
  times[at] = n;
  return overlap;
}

// Runs on: executor threads (an outbound DMA channel's pieces). Owns: when a
// piece's last byte leaves its link, one implementation per link mode of the
// plan (timing.link_sharing), chosen once per channel where it is built
// (linkTimingFor). The channel pays the piece's credit and DMA setup first and
// hands the result here as `readyPs`; what it does with the answer (publish the
// piece, its arrival = sent + the route's latency) is the same in every mode
// (./outbound.ts).
//
//   none        links are not shared: sent = ready + serial
//   optimistic  shared links, each piece timed alone and checked for overlap
//               with other flows (./link-overlap.ts; decision 0030)
//   arbitrated  shared links, each piece a flow the coordinator's link arbiter
//               makes final (lib/coordinator/link-arbiter.ts): the answer comes
//               from another thread, so a send never completes as issued
import { FLOW, HEADER, PE, WAIT_KIND } from '../shm/layout.js';
import type { LinkMode } from '../config/plan.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import { linkOverlapOf, type LinkOverlap, type Route } from './link-overlap.js';

export interface LinkTiming {
  /** True when `cross` answers at once (a number): the channel may then send on its fast path. */
  readonly synchronous: boolean;
  /**
   * A piece from this channel's PE to `peer`, ready at `readyPs`, that takes `serialPs`
   * alone and flies `flightPs`, entering its links no earlier than `joinNotBeforePs`:
   * when its last byte left. A number whenever `synchronous`.
   */
  cross(peer: number, readyPs: number, serialPs: number, flightPs: number, joinNotBeforePs: number): number | Promise<number>;
}

/** Links not shared: a piece has its link to itself. */
class AloneLinks implements LinkTiming {
  readonly synchronous = true;
  cross(_peer: number, readyPs: number, serialPs: number): number {
    return readyPs + serialPs;
  }
}
const ALONE = new AloneLinks();

/** Shared links, the optimistic fast path: a piece's times alone, its overlap with other flows checked. */
class OptimisticLinks implements LinkTiming {
  readonly synchronous = true;
  // The route to the peer, memoised: a channel sends to one peer per kernel.
  private routePeer = -1;
  private route: Route | undefined;

  constructor(
    private readonly overlap: LinkOverlap,
    private readonly pe: number,
  ) {}

  cross(peer: number, readyPs: number, serialPs: number, flightPs: number, joinNotBeforePs: number): number {
    if (peer !== this.routePeer || this.route === undefined) {
      this.routePeer = peer;
      this.route = this.overlap.route(this.pe, peer);
    }
    return this.overlap.cross(this.route, readyPs, serialPs, flightPs, joinNotBeforePs);
  }
}

/** Shared links, arbitrated: the channel's flow slot at the coordinator's link arbiter. */
class ArbitratedLinks implements LinkTiming {
  readonly synchronous = false;
  constructor(
    private readonly env: ThreadEnv,
    private readonly pe: number,
    /** The outbound channel's direction (0..3): its flow slot. */
    private readonly dir: number,
    /** The channel's actor: it waits for the answer as this one. */
    private readonly actor: number,
  ) {}

  /** Ask the link arbiter (on the coordinator) when the piece's last byte left, sharing its route's links with the flows that cross them at once; wait for the answer. */
  async cross(peer: number, readyPs: number, serialPs: number, flightPs: number, joinNotBeforePs: number): Promise<number> {
    const { sched, shared } = this.env;
    const L = shared.layout;
    const { pe, dir } = this;
    shared.times[L.flow(pe, dir, FLOW.START_PS)] = readyPs;
    shared.times[L.flow(pe, dir, FLOW.SERIAL_PS)] = serialPs;
    shared.times[L.flow(pe, dir, FLOW.PEER)] = peer;
    shared.times[L.flow(pe, dir, FLOW.LATENCY_PS)] = flightPs;
    shared.times[L.flow(pe, dir, FLOW.JOIN_MIN_PS)] = joinNotBeforePs;
    Atomics.add(shared.ctl, HEADER.FLOWS_PENDING, 1);
    const n = Atomics.add(shared.ctl, L.pe(pe, PE.FLOW_REQ + dir), 1) + 1;
    // Blocking publishes this channel as waiting, which rings the coordinator (flows are pending).
    await sched.waitUntil(this.actor, L.pe(pe, PE.FLOW_DONE + dir), n, WAIT_KIND.LINK, peer, readyPs);
    return shared.times[L.flow(pe, dir, FLOW.SENT_PS)];
  }
}

/** The link timing of the plan's mode for the outbound channel `dir` of PE `pe`. */
export function linkTimingFor(mode: LinkMode, env: ThreadEnv, pe: number, dir: number, actor: number): LinkTiming {
  switch (mode) {
    case 'none':
      return ALONE;
    case 'optimistic':
      return new OptimisticLinks(linkOverlapOf(env), pe);
    case 'arbitrated':
      return new ArbitratedLinks(env, pe, dir, actor);
    default: {
      const never: never = mode;
      throw new Error(`internal: unknown link mode '${String(never)}'`);
    }
  }
}

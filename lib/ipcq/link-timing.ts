// Runs on: executor threads (an outbound DMA channel's pieces). Owns: when a
// piece's last byte leaves its link, one implementation per link mode of the
// plan (timing.link_sharing), chosen once per channel where it is built
// (linkTimingFor). The channel pays the piece's credit and DMA setup first and
// hands the result here as `readyPs`; what it does with the answer (publish the
// piece, its arrival = sent + the route's latency) is the same in every mode
// (./outbound.ts).
//
//   none        links are not shared: sent = ready + serial
//   claimed     shared links: a piece proved alone on its links (its channel's
//               claims, the launch horizon past its end) takes its times alone at
//               once; one that is not yet is held, then released or handed to the
//               link arbiter; one whose links another channel claims goes to the
//               arbiter (lib/sync/link-claims.ts; decision 0100)
//   arbitrated  shared links, each piece a flow the coordinator's link arbiter
//               makes final (lib/coordinator/link-arbiter.ts): the answer comes
//               from another thread, so a send never completes as issued
import { DIR_COUNT, EXEC, FLOW, HEADER, PE, WAIT_KIND } from '../shm/layout.js';
import { markFlowRequest } from '../shm/flow-requests.js';
import type { LinkMode } from '../config/plan.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import type { SharedState } from '../shm/shared-state.js';
import { NO_ACTOR } from '../sync/scheduler.js';
import { raisePeFloor } from '../sync/pe-floor.js';
import { CLAIMED, ClaimsSeen, HOLD, claimedBy, keptHorizon, launchHorizon, machineLinks, releaseHeld } from '../sync/link-claims.js';
import { linkReach, unreachedBefore, type LinkReach } from '../sync/link-reach.js';
import { aloneArrivalPs, aloneRateOf, joinOf, pieceBytes, pieceStartPs } from '../topology/link-share.js';
import { ZERO_PS } from '../time/virtual-time.js';

export interface LinkTiming {
  /** True when `cross` answers at once (a number): the channel may then send on its fast path. */
  readonly synchronous: boolean;
  /** False when every piece may go alone (links not shared): the fast path asks nothing. */
  readonly checksAlone: boolean;
  /**
   * A piece from this channel's PE to `peer`, ready at `readyPs`, that takes `serialPs`
   * alone and flies `flightPs`, entering its links no earlier than `joinNotBeforePs`:
   * when its last byte left. A number whenever `synchronous`.
   */
  cross(peer: number, readyPs: number, serialPs: number, flightPs: number, joinNotBeforePs: number): number | Promise<number>;
  /**
   * The channel's fast path, before it publishes anything: may the piece (`piece`'s
   * ready, serial, flight and join times) take its times alone at once? When true,
   * `piece.sentPs` is its sent time alone (what `cross` answers then); when false the
   * send takes the queued path. Only asked when `synchronous`. One call a piece: its
   * start, join and end alone are worked out once for the check and the answer, and its
   * times travel in the channel's one PieceTimes, not as arguments, which V8 boxes into
   * a heap number each when the call is not inlined (decision 0216).
   */
  sentAlone(peer: number, piece: PieceTimes): boolean;
  /** The steps of a piece the fast path could not send alone, where this link timing holds pieces (lib/ipcq/held-send.ts). */
  readonly held?: HeldLinks;
}

/** The steps of a one-piece send that waits for its links (LinkTiming.held). */
export interface HeldLinks {
  /** Would a piece to `peer` not sent alone be held for a pass (else it goes to the link arbiter)? */
  mayHold(peer: number): boolean;
  /** Hold it (`piece`'s times, as sentAlone was given them): the word a pass releases it on (it reaches HOLD.ALONE or later). */
  hold(peer: number, piece: PieceTimes): number;
  /** Once released: when its last byte left, at once, or later when the pass handed it to the arbiter. */
  heldSent(peer: number, piece: PieceTimes, word: number): number | Promise<number>;
  /** The link arbiter's request for a piece that may not be held (mayHold false): the count its flow-done word must reach (arbitratedWord). */
  request(peer: number, piece: PieceTimes): number;
  /** The word the arbiter's answers count on. */
  readonly arbitratedWord: number;
  /** The arbiter's answer, once its word reached the request's count: when the piece's last byte left. */
  arbitratedSent(): number;
}

/** A piece's times on the fast path (lib/ipcq/outbound.ts planAlone), in ps: one object a channel, its fields rewritten each piece. */
export class PieceTimes {
  readyPs = ZERO_PS;
  /** Its serialisation alone. */
  serialPs = ZERO_PS;
  /** Its route's latency. */
  flightPs = ZERO_PS;
  /** It enters its links no earlier (the flow's link horizon). */
  joinNotBeforePs = ZERO_PS;
  /** The answer of sentAlone: when its last byte left, alone. */
  sentPs = ZERO_PS;
}

/** Links not shared: a piece has its link to itself. */
class AloneLinks implements LinkTiming {
  readonly synchronous = true;
  readonly checksAlone = false;
  cross(_peer: number, readyPs: number, serialPs: number): number {
    return readyPs + serialPs;
  }
  sentAlone(_peer: number, piece: PieceTimes): boolean {
    piece.sentPs = piece.readyPs + piece.serialPs;
    return true;
  }
}
const ALONE = new AloneLinks();

/** A route's link ids and its narrowest link's GB/s (the piece's rate alone). */
interface Route {
  readonly links: readonly number[];
  readonly gbPerS: number;
}

/**
 * Messages a thread sends between two fresh horizons taken by its checks while some piece is
 * held for its links (a fresh horizon releases it): as many as PEs, at least 16.
 */
function freshEvery(pes: number): number {
  return Math.max(16, pes);
}

/** With no piece held, a thread's checks take a fresh horizon this many times less often (decision 0267). */
export const QUIET_SPACING = 4;

/**
 * Is a thread's fresh horizon due, `since` messages after its last, on a machine of `pes` PEs?
 * After freshEvery(pes) while some piece of the session is held (a fresh horizon releases it),
 * after QUIET_SPACING times as many while none is. The held count is read only past the first.
 */
export function freshHorizonDue(sh: Pick<SharedState, 'load'>, since: number, pes: number): boolean {
  const every = freshEvery(pes);
  return since >= every && (since >= every * QUIET_SPACING || sh.load(HEADER.HELD_PENDING) > 0);
}

/** Shared links, proved alone by claims and the launch horizon (lib/sync/link-claims.ts), else held or arbitrated. */
class ClaimedLinks implements LinkTiming, HeldLinks {
  readonly synchronous = true;
  readonly checksAlone = true;
  readonly held = this;
  // The route to the peer, memoised: a channel sends to one peer per kernel.
  private routePeer = -1;
  private route: Route = { links: [], gbPerS: Infinity };
  private readonly arbiter: ArbitratedLinks;

  constructor(
    private readonly env: ThreadEnv,
    private readonly pe: number,
    private readonly dir: number,
    private readonly actor: number,
  ) {
    this.arbiter = new ArbitratedLinks(env, pe, dir, actor);
    this.reach = linkReach(env.machine, machineLinks(env.machine));
  }
  /** How soon a flow not claimed yet could join each link (lib/sync/link-reach.ts). */
  private readonly reach: LinkReach;
  /** Whether the route is claimed by this channel alone, read again only after a kernel begins to claim. */
  private readonly claims = new ClaimsSeen();
  /** The times of the piece `cross` asks about (the queued path's). */
  private readonly crossing = new PieceTimes();

  private routeTo(peer: number): Route {
    if (peer !== this.routePeer) {
      const links = machineLinks(this.env.machine);
      this.routePeer = peer;
      const r = links.route(this.pe, peer);
      this.route = { links: r, gbPerS: aloneRateOf(r, links.bandwidths()) };
    }
    return this.route;
  }

  /** The piece's sent time alone. */
  private alone(peer: number, readyPs: number, serialPs: number, flightPs: number, joinNotBeforePs: number): number {
    const startPs = pieceStartPs(readyPs, flightPs, joinNotBeforePs);
    if (pieceBytes(serialPs, this.routeTo(peer).gbPerS) === 0) return startPs;
    return aloneArrivalPs(joinOf(startPs, flightPs), serialPs) - flightPs;
  }

  sentAlone(peer: number, piece: PieceTimes): boolean {
    const route = this.routeTo(peer);
    const flightPs = piece.flightPs;
    const startPs = pieceStartPs(piece.readyPs, flightPs, piece.joinNotBeforePs);
    // A piece that takes no bandwidth uses no link.
    if (pieceBytes(piece.serialPs, route.gbPerS) === 0) {
      piece.sentPs = startPs;
      return true;
    }
    const arrivalPs = aloneArrivalPs(joinOf(startPs, flightPs), piece.serialPs);
    if (!this.provedAlone(route, arrivalPs)) return false;
    piece.sentPs = arrivalPs - flightPs;
    return true;
  }

  /**
   * Publish the piece's arrival alone as its kernel's floor (it ends no earlier), then
   * check: no flow not claimed yet can reach its links before its end, and then its
   * claims alone on its route. In that order: a kernel that claims after the floors were
   * read was bounded by them, and one that claimed before is seen by the claims.
   */
  private provedAlone(route: Route, arrivalPs: number): boolean {
    const sh = this.env.shared;
    const L = sh.layout;
    const arrivalW = L.flow(this.pe, this.dir, FLOW.ARRIVAL_PS);
    if (arrivalPs > sh.times[arrivalW]) sh.times[arrivalW] = arrivalPs;
    raisePeFloor(sh, this.pe, arrivalPs);
    // A fresh horizon costs O(PEs): taken every O(PEs) messages (freshHorizonDue), its cost a message stays O(1) and the kept one close.
    const stats = this.env.stats;
    if (freshHorizonDue(sh, stats.messages - stats.freshHorizonAt, L.dims.pes)) {
      stats.freshHorizonAt = stats.messages;
      releaseOthers(this.env);
    }
    // Else it is held, and released when a pass finds it may go (this one, a later fresh horizon, the coordinator's).
    return unreachedBefore(sh, this.reach, route.links, this.pe, arrivalPs, keptHorizon(sh)) && this.claims.alone(sh, route.links, this.pe, this.dir);
  }

  cross(peer: number, readyPs: number, serialPs: number, flightPs: number, joinNotBeforePs: number): number | Promise<number> {
    const piece = this.crossing;
    piece.readyPs = readyPs;
    piece.serialPs = serialPs;
    piece.flightPs = flightPs;
    piece.joinNotBeforePs = joinNotBeforePs;
    if (this.sentAlone(peer, piece)) {
      this.env.stats.linkPieces.alone++;
      return piece.sentPs;
    }
    if (!this.mayHold(peer)) return this.arbiter.cross(peer, readyPs, serialPs, flightPs, joinNotBeforePs);
    return this.holdQueued(peer, piece);
  }

  /** Held when its links are its channel's alone, or its kernel's two channels' (a 2-rank ring): a pass may release it. Else the arbiter's. */
  mayHold(peer: number): boolean {
    return claimedBy(this.env.shared, this.routeTo(peer).links, this.pe, this.dir) !== CLAIMED.OTHERS;
  }

  /**
   * Hold the piece until a pass releases it to go alone (the horizon passed its end) or
   * hands it to the link arbiter: the queued path's wait, as a promise.
   */
  private async holdQueued(peer: number, piece: PieceTimes): Promise<number> {
    const word = this.hold(peer, piece);
    // Released by a thread's periodic fresh horizon, or by the coordinator's pass (rung by a thread about to park).
    await this.env.sched.waitUntil(NO_ACTOR, word, HOLD.ALONE, WAIT_KIND.LINK, peer, piece.readyPs);
    return this.heldSent(peer, piece, word);
  }

  /**
   * Publish the piece as held: the word a pass releases it on (returned). The channel
   * stays RUNNING meanwhile, at the piece's ready time: a lower bound for the arbiters,
   * and never a deadlock while held.
   */
  hold(peer: number, piece: PieceTimes): number {
    const { env, pe, dir } = this;
    const sh = env.shared;
    const L = sh.layout;
    const startPs = pieceStartPs(piece.readyPs, piece.flightPs, piece.joinNotBeforePs);
    const joinPs = joinOf(startPs, piece.flightPs);
    // Its request as the link arbiter would read it (a release pass reads its join: lib/sync/link-claims.ts), and its end alone.
    sh.times[L.flow(pe, dir, FLOW.START_PS)] = piece.readyPs;
    sh.times[L.flow(pe, dir, FLOW.LATENCY_PS)] = piece.flightPs;
    sh.times[L.flow(pe, dir, FLOW.JOIN_MIN_PS)] = piece.joinNotBeforePs;
    sh.times[L.flow(pe, dir, FLOW.PEER)] = peer;
    sh.times[L.flow(pe, dir, FLOW.END_PS)] = aloneArrivalPs(joinPs, piece.serialPs);
    sh.times[L.clock(this.actor)] = piece.readyPs;
    const w = L.pe(pe, PE.HOLD + dir);
    Atomics.add(sh.ctl, HEADER.HELD_PENDING, 1);
    Atomics.store(sh.ctl, w, HOLD.HELD);
    // A change of state for the passes that hand held pieces to the arbiter once nothing else
    // may run (a holding channel counts as waiting): one that took its horizon before this hold
    // must look again (lib/coordinator/coordinator-worker.ts).
    env.sched.countStateChange();
    return w;
  }

  request(peer: number, piece: PieceTimes): number {
    return this.arbiter.request(peer, piece.readyPs, piece.serialPs, piece.flightPs, piece.joinNotBeforePs);
  }

  get arbitratedWord(): number {
    return this.arbiter.doneWord;
  }

  arbitratedSent(): number {
    return this.arbiter.sentPs();
  }

  /** A held piece's word reached HOLD.ALONE or later: its sent time alone, or the arbiter's. */
  heldSent(peer: number, piece: PieceTimes, word: number): number | Promise<number> {
    const { env } = this;
    const ctl = env.shared.ctl;
    const how = Atomics.load(ctl, word);
    Atomics.store(ctl, word, HOLD.NONE);
    if (how === HOLD.ALONE) {
      env.stats.linkPieces.released++;
      return this.alone(peer, piece.readyPs, piece.serialPs, piece.flightPs, piece.joinNotBeforePs);
    }
    env.stats.linkPieces.handed++;
    return this.arbiter.cross(peer, piece.readyPs, piece.serialPs, piece.flightPs, piece.joinNotBeforePs);
  }
}

/** Shared links, arbitrated: the channel's flow slot at the coordinator's link arbiter. */
class ArbitratedLinks implements LinkTiming {
  readonly synchronous = false;
  readonly checksAlone = true;
  constructor(
    private readonly env: ThreadEnv,
    private readonly pe: number,
    /** The outbound channel's direction (0..3): its flow slot. */
    private readonly dir: number,
    /** The channel's actor: it waits for the answer as this one. */
    private readonly actor: number,
  ) {}

  sentAlone(): boolean {
    return false;
  }

  /** The word the arbiter's answers to this channel count on. */
  get doneWord(): number {
    return this.env.shared.layout.pe(this.pe, PE.FLOW_DONE + this.dir);
  }

  /** Ask the link arbiter (on the coordinator) when the piece's last byte left, sharing its route's links with the flows that cross them at once; wait for the answer. */
  async cross(peer: number, readyPs: number, serialPs: number, flightPs: number, joinNotBeforePs: number): Promise<number> {
    const n = this.request(peer, readyPs, serialPs, flightPs, joinNotBeforePs);
    // Blocking publishes this channel as waiting, which rings the coordinator (flows are pending).
    await this.env.sched.waitUntil(this.actor, this.doneWord, n, WAIT_KIND.LINK, peer, readyPs);
    return this.sentPs();
  }

  /** Publish the piece's request: the count the channel's done word reaches when it is answered. */
  request(peer: number, readyPs: number, serialPs: number, flightPs: number, joinNotBeforePs: number): number {
    const { shared } = this.env;
    const L = shared.layout;
    const { pe, dir } = this;
    shared.times[L.flow(pe, dir, FLOW.START_PS)] = readyPs;
    shared.times[L.flow(pe, dir, FLOW.SERIAL_PS)] = serialPs;
    shared.times[L.flow(pe, dir, FLOW.PEER)] = peer;
    shared.times[L.flow(pe, dir, FLOW.LATENCY_PS)] = flightPs;
    shared.times[L.flow(pe, dir, FLOW.JOIN_MIN_PS)] = joinNotBeforePs;
    this.env.stats.linkPieces.arbitrated++;
    Atomics.add(shared.ctl, HEADER.FLOWS_PENDING, 1);
    const n = Atomics.add(shared.ctl, L.pe(pe, PE.FLOW_REQ + dir), 1) + 1;
    markFlowRequest(shared.ctl, L, pe * DIR_COUNT + dir);
    return n;
  }

  /** The answer to the last request. */
  sentPs(): number {
    const { shared } = this.env;
    return shared.times[shared.layout.flow(this.pe, this.dir, FLOW.SENT_PS)];
  }
}

/**
 * A fresh horizon (floors only, O(PEs)), and every held piece it lets go released: a
 * thread's periodic one. The lookahead pass over held pieces is the coordinator's alone
 * (decision 0248).
 */
function releaseOthers(env: ThreadEnv): void {
  const h = launchHorizon(env.shared, env.machine, false);
  if (Atomics.load(env.shared.ctl, HEADER.HELD_PENDING) === 0) return;
  releaseHeld(env.shared, env.machine, h, (pe, dir) => env.sched.publish(env.shared.layout.pe(pe, PE.HOLD + dir), env.plan.peExecutor[pe]));
}

/** The link timing of the plan's mode for the outbound channel `dir` of PE `pe`. */
export function linkTimingFor(mode: LinkMode, env: ThreadEnv, pe: number, dir: number, actor: number): LinkTiming {
  switch (mode) {
    case 'none':
      return ALONE;
    case 'claimed':
      return new ClaimedLinks(env, pe, dir, actor);
    case 'arbitrated':
      return new ArbitratedLinks(env, pe, dir, actor);
    default: {
      const never: never = mode;
      throw new Error(`internal: unknown link mode '${String(never)}'`);
    }
  }
}

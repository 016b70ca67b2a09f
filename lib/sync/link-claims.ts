// Runs on: executor threads (a kernel's claims at its start and end, a piece's
// check, the release of held pieces by a thread taking its periodic fresh
// horizon) and the coordinator thread (the release, with lookahead, when a
// thread is about to park with pieces held, or the hand-over to the link
// arbiter). Only with timing.link_sharing: max_min and the fast path on. Owns: the proof that a piece
// of a shared link meets no other flow, so its times alone are final at once, and
// nothing is ever run again (docs/decisions/0100-claims-and-a-launch-horizon.md,
// 0170-a-piece-is-alone-by-the-reach-of-its-links.md).
//
// A piece P of outbound channel c goes alone when both hold at one instant:
//   1. every link of its route has one claim, c's. A kernel claims, when it
//      starts, the route of each of its outbound channels (its port table), and
//      drops the claims when it ends: a flow of any kernel that has claimed
//      crosses only links it claimed, so none crosses P's.
//   2. no flow of a kernel that has not claimed yet can join one of P's links
//      before P's end (./link-reach.ts): from the floors of the PEs around each
//      link, each a latency further back, and the launch horizon H below for
//      idle PEs (no launch not yet committed, and no kernel that has not claimed
//      yet, can start before H).
// Then no other flow's bandwidth phase overlaps P's on any link, and the link
// model gives P its times alone (decision 0030's argument). Otherwise P is held
// at its channel (2 fails) until a pass finds it unreachable, or handed to the
// coordinator's link arbiter (1 fails, or nothing is left running that could
// raise a floor or H), which times it with the other flows. An alone piece is
// never on a link while the arbiter sees a second flow there, so the arbiter
// needs no word about them.
//
// H, from what the actors publish, in one snapshot (HEADER.STATE_EPOCH before
// and after, as the arbiters take theirs):
//   a launch command in flight              -Infinity (it has not claimed)
//   an active PE (a kernel running, blocked  max(its clock word, its channels'
//   or queued)                              latest arrival alone): its kernel
//                                           ends no earlier (decision 0023's
//                                           end rule), so what that end wakes
//                                           launches no earlier; a kernel
//                                           queued behind it starts no earlier
//   a host RUNNING, or BLOCKED on anything  its clock word
//   but the three below, or with its wait
//   already satisfied
//   a host BLOCKED on a kernel's end, a     none of its own: it resumes at or
//   barrier or its ranks (condition false)  after what wakes it (that kernel's
//                                           end, the last arrival, its ranks)
//   idle PEs and hosts, DMA channels,       none: they launch nothing
//   branches
// H only rises (each value is a lower bound on every later launch), so the
// highest found is kept in `times` (layout.horizon) and one load answers most checks.
import { ACTOR, ACTOR_STATE, ACTORS_PER_PE, DIR_COUNT, FLOW, HEADER, PE, RECORD, WAIT_KIND } from '../shm/layout.js';
import { stateEpoch, type SharedState } from '../shm/shared-state.js';
import { Links } from '../topology/links.js';
import { kernelEndBounds, kernelFlowNow } from './end-bounds.js';
import { linkReach, unreachedBefore } from './link-reach.js';
import { floorNow, peFloor } from './pe-floor.js';
import { joinOf, pieceStartPs } from '../topology/link-share.js';
import type { Machine } from '../topology/machine.js';
import { ownsWord } from './owned.js';

/** Snapshot attempts before a horizon is given up as -Infinity (actors kept changing state). */
const SNAPSHOT_TRIES = 3;

/** PE.HOLD values. */
export const HOLD = { NONE: 0, HELD: 1, ALONE: 2, ARBITRATED: 3 } as const;

/** What claiming reads of a kernel's port table (lib/kernel/ports.ts): where each direction sends, and the world's PEs with peer channels. */
export interface ClaimPorts {
  readonly send: readonly object[];
  readonly pes?: readonly number[];
}

/** A kernel's claims: per claimed link, its claimer's id and the amount added to its count (1: one channel's; 2: two of its channels cross it). */
export interface Claims {
  readonly links: number[];
  readonly ids: number[];
  readonly amounts: number[];
}

/**
 * A claimer's id, added to a link's id sum with each claim: outbound channel (pe, dir)
 * alone, in [1, 4 * pes]; two channels of PE pe's kernel together, in (4 * pes, 5 * pes].
 * A claim adds to the count before the sum and a release takes from the sum first, and
 * claimedBy reads the sum before the count, so the claims its sum holds are among those
 * its count holds. A piece's own claim is among both. So a count of 1 with sum c is
 * channel c alone, and a count of 2 with sum 2k is pair k alone: with a single claim of
 * the piece's channel and one other counted, the sum is at most 8 * pes < 2k.
 */
function channelId(pe: number, dir: number): number {
  return pe * DIR_COUNT + dir + 1;
}
function pairId(sh: SharedState, pe: number): number {
  return sh.layout.dims.pes * DIR_COUNT + pe + 1;
}

/** Per thread: the machine's links (routes are asked once per kernel and channel). */
const linksOf = new WeakMap<Machine, Links>();
export function machineLinks(m: Machine): Links {
  let l = linksOf.get(m);
  if (!l) linksOf.set(m, (l = new Links(m)));
  return l;
}

/**
 * Claim the routes of a kernel's outbound channels, from PE `pe` with port table
 * `ports` (a separate function of the launch path: lib/pe/pe-runtime.ts calls it when
 * the kernel starts, before it can send). Peer channels (ports.pes) may send on any
 * direction's ring to any rank of the world: each claims every route it may take.
 */
export function claimLinks(sh: SharedState, m: Machine, pe: number, ports: ClaimPorts, peerRing: (k: number) => number): Claims {
  const links = machineLinks(m);
  const owner = new Map<number, number>(); // link -> channel id, or -1: two channels of this kernel
  const add = (dir: number, to: number): void => {
    if (to === pe) return;
    const route = links.route(pe, to);
    for (let i = 0; i < route.length; i++) {
      const l = route[i];
      const o = owner.get(l);
      const mine = channelId(pe, dir);
      owner.set(l, o === undefined || o === mine ? mine : -1);
    }
  };
  for (let d = 0; d < DIR_COUNT; d++) {
    const p = ports.send[d];
    if (p !== undefined && 'pe' in p) add(d, (p as { pe: number }).pe);
  }
  if (ports.pes !== undefined) {
    const n = ports.pes.length;
    const me = ports.pes.indexOf(pe);
    for (let r = 0; r < n; r++) if (r !== me) add(peerRing((r - me + n) % n), ports.pes[r]);
  }
  const ctl = sh.ctl;
  const L = sh.layout;
  const claims: Claims = { links: [], ids: [], amounts: [] };
  if (owner.size === 0) return claims;
  // Begun before the adds and done after them: a ClaimsSeen that finds the first unchanged has seen every claim there is.
  Atomics.add(ctl, HEADER.CLAIMS_BEGUN, 1);
  for (const [l, o] of owner) {
    const w = L.linkClaims(l);
    const amount = o < 0 ? 2 : 1;
    const id = o < 0 ? pairId(sh, pe) : o;
    // The count before the sum (and dropped after it): what a reader's sum holds, its count holds (claimedBy).
    Atomics.add(ctl, w, amount);
    Atomics.add(ctl, w + 1, amount * id);
    claims.links.push(l);
    claims.ids.push(id);
    claims.amounts.push(amount);
  }
  Atomics.add(ctl, HEADER.CLAIMS_DONE, 1);
  return claims;
}

/** Drop a kernel's claims (it has ended: every piece it sent has left its links). */
export function releaseLinks(sh: SharedState, claims: Claims): void {
  const ctl = sh.ctl;
  const L = sh.layout;
  for (let i = 0; i < claims.links.length; i++) {
    const w = L.linkClaims(claims.links[i]);
    Atomics.sub(ctl, w + 1, claims.amounts[i] * claims.ids[i]);
    Atomics.sub(ctl, w, claims.amounts[i]);
  }
}

/** Does every link of `route` hold one claim, outbound channel (pe, dir)'s (its kernel holds it while it sends)? */
export function claimedAlone(sh: SharedState, route: readonly number[], pe: number, dir: number): boolean {
  return claimedBy(sh, route, pe, dir) === CLAIMED.ALONE;
}

/**
 * claimedAlone for the pieces of one outbound channel, with a memory: once it has read its
 * route's links claimed by the channel alone while no claim was on its way, it answers from
 * one word (HEADER.CLAIMS_BEGUN) until a kernel begins to claim. Only an add makes a route
 * not alone, and claimLinks bumps the word before its adds; a release takes only claims of
 * kernels already seen, none on the route but the channel's own, held while it sends. So
 * an unchanged word means the links are as read, and the answer holds at the load: a kernel
 * that begins to claim later claims after the caller's floors were read (decision 0276).
 */
export class ClaimsSeen {
  /** The route last read claimed alone, with no claim on its way; null when there is none. */
  private route: readonly number[] | null = null;
  /** HEADER.CLAIMS_BEGUN when it was read. */
  private begun = 0;
  /** How many times the links were read (the rest was answered from the word). */
  linkReads = 0;

  alone(sh: SharedState, route: readonly number[], pe: number, dir: number): boolean {
    if (route === this.route && sh.load(HEADER.CLAIMS_BEGUN) === this.begun) return true;
    // Done before the links and begun after: equal, no claim was on its way while they were read.
    const done = sh.load(HEADER.CLAIMS_DONE);
    this.linkReads++;
    const alone = claimedAlone(sh, route, pe, dir);
    const begun = sh.load(HEADER.CLAIMS_BEGUN);
    this.route = alone && begun === done ? route : null;
    this.begun = begun;
    return alone;
  }
}

/** How a piece's route is claimed (claimedBy). */
export const CLAIMED = { OTHERS: 0, ALONE: 1, OWN_KERNEL: 2 } as const;

/**
 * Who claims the links of `route`, a piece of outbound channel (pe, dir): ALONE when
 * every link holds that channel's claim only; OWN_KERNEL when every link holds it only
 * or the claim of two channels of its kernel only, at least one the latter (a 2-rank
 * ring: east and west reach the one peer over one link); else OTHERS. The sum is read
 * before the count (see channelId).
 */
export function claimedBy(sh: SharedState, route: readonly number[], pe: number, dir: number): number {
  const ctl = sh.ctl;
  const L = sh.layout;
  const mine = channelId(pe, dir);
  let how: number = CLAIMED.ALONE;
  for (let i = 0; i < route.length; i++) {
    const w = L.linkClaims(route[i]);
    const sum = Atomics.load(ctl, w + 1);
    const n = Atomics.load(ctl, w);
    if (n === 1 && sum === mine) continue;
    if (n !== 2 || sum !== 2 * pairId(sh, pe)) return CLAIMED.OTHERS;
    how = CLAIMED.OWN_KERNEL;
  }
  return how;
}

/** Per thread: the PEs' end bounds of the last horizon taken. */
let ends = new Float64Array(0);
/** Per thread: did the last horizon taken look ahead, and succeed? Then end-bounds' flow bounds are its (freshFlowNow). */
let flowsFresh = false;

/**
 * The launch horizon now (see the header), raised into the kept maximum; -Infinity when no
 * snapshot could be taken or a command is in flight. Without `lookahead` an active PE is
 * bounded by its floor only: O(PEs) instead of a walk over every active actor.
 */
export function launchHorizon(sh: SharedState, m: Machine, lookahead = true): number {
  const L = sh.layout;
  const ctl = sh.ctl;
  const times = sh.times;
  flowsFresh = false;
  if (ends.length < L.dims.pes) ends = new Float64Array(L.dims.pes);
  for (let attempt = 0; attempt < SNAPSHOT_TRIES; attempt++) {
    const epoch = stateEpoch(sh);
    if (Atomics.load(ctl, HEADER.COMMANDS_IN_FLIGHT) !== 0) return -Infinity;
    let h = Infinity;
    // An active PE: its kernel's end, looking ahead through the receives it waits for (./end-bounds.ts).
    if (lookahead) {
      kernelEndBounds(sh, m, floorNow, ends); // an active PE's bound without lookahead: its clock and arrivals
      for (let pe = 0; pe < L.dims.pes; pe++) if (ends[pe] < h) h = ends[pe];
    } else {
      // An idle PE (-Infinity) launches nothing of its own: the hosts below bound it.
      for (let pe = 0; pe < L.dims.pes; pe++) {
        const f = peFloor(sh, pe);
        if (f !== -Infinity && f < h) h = f;
      }
    }
    hostWaits.use(sh);
    for (let host = 0; host < L.dims.hosts; host++) {
      const a = L.hostActor(host);
      const s = hostWaits.read(sh, host, a);
      if (s === ACTOR_STATE.RUNNING) h = Math.min(h, times[L.clock(a)]);
      else if (s === ACTOR_STATE.BLOCKED) h = Math.min(h, blockedHostBound(sh, a, host));
    }
    if (stateEpoch(sh) === epoch) {
      // Infinity (nothing active) is not kept: the next launch's actors are not active yet.
      if (h !== Infinity && h > times[L.horizon]) times[L.horizon] = h;
      flowsFresh = lookahead;
      return Math.max(h, times[L.horizon]);
    }
  }
  return -Infinity;
}

/**
 * Per thread: each host's state and wait words as a horizon last read them, and the
 * generation (ACTOR.GEN) they were read at. A state change stores the wait words, then
 * the state, then bumps the generation (lib/sync/scheduler.ts), so while a host's
 * generation is the one kept, its state and wait are the ones kept: a horizon reads one
 * word a host instead of up to four, which for another thread's host are each an
 * Atomics.load (decision 0234). Only a read between two equal generations is kept.
 */
class HostWaits {
  private sh: SharedState | null = null;
  /** By host: the generation its words were read at (-1: none kept). */
  private gen = new Int32Array(0);
  /** By host: STATE, WAIT_KIND, WAIT_TARGET, WAIT_WORD, WAIT_AUX as read. */
  private words = new Int32Array(0);

  /** Start on session `sh` (a new session keeps nothing of the last). */
  use(sh: SharedState): void {
    if (sh === this.sh) return;
    this.sh = sh;
    this.gen = new Int32Array(sh.layout.dims.hosts).fill(-1);
    this.words = new Int32Array(sh.layout.dims.hosts * 5);
  }

  /** Host `host`'s (actor `a`'s) state now; its wait words are then kept for word(). */
  read(sh: SharedState, host: number, a: number): number {
    const ctl = sh.ctl;
    const w = sh.layout.actor(a, 0);
    const g = Atomics.load(ctl, w + ACTOR.GEN);
    const k = host * 5;
    if (this.gen[host] === g) return this.words[k];
    // The state is loaded (main writes it as it hands a rank over); the wait words are this thread's alone, or loaded (./owned.ts).
    const s = Atomics.load(ctl, w + ACTOR.STATE);
    this.words[k] = s;
    if (s === ACTOR_STATE.BLOCKED) {
      const own = ownsWord(sh, a, ACTOR.WAIT_KIND);
      this.words[k + 1] = own ? ctl[w + ACTOR.WAIT_KIND] : Atomics.load(ctl, w + ACTOR.WAIT_KIND);
      this.words[k + 2] = own ? ctl[w + ACTOR.WAIT_TARGET] : Atomics.load(ctl, w + ACTOR.WAIT_TARGET);
      this.words[k + 3] = own ? ctl[w + ACTOR.WAIT_WORD] : Atomics.load(ctl, w + ACTOR.WAIT_WORD);
      this.words[k + 4] = own ? ctl[w + ACTOR.WAIT_AUX] : Atomics.load(ctl, w + ACTOR.WAIT_AUX);
    }
    this.gen[host] = Atomics.load(ctl, w + ACTOR.GEN) === g ? g : -1;
    return s;
  }

  /** Wait word `i` (1 kind, 2 target, 3 word, 4 aux) of host `host`, as its last read() kept it. */
  word(host: number, i: number): number {
    return this.words[host * 5 + i];
  }
}
const hostWaits = new HostWaits();

/** A blocked host's bound (see the header), from its wait as hostWaits read it: Infinity when what wakes it is bounded elsewhere. */
function blockedHostBound(sh: SharedState, a: number, host: number): number {
  const L = sh.layout;
  const clock = sh.times[L.clock(a)];
  const kind = hostWaits.word(host, 1);
  const target = hostWaits.word(host, 2);
  // The word waited for is written by whichever thread publishes it: always loaded.
  const satisfied = Atomics.load(sh.ctl, hostWaits.word(host, 3)) >= target;
  if (kind === WAIT_KIND.KERNEL_DONE) {
    if (!satisfied) return Infinity;
    // It resumes at the kernel's end, published before the PE's DONE_SEQ.
    const pe = hostWaits.word(host, 4);
    const seq = target - 1;
    return Math.max(clock, sh.times[L.record(pe, seq, RECORD.END_PS)]);
  }
  if ((kind === WAIT_KIND.BARRIER || kind === WAIT_KIND.RANKS_DONE) && !satisfied) return Infinity;
  return clock;
}

/** The earliest any flow of PE `pe`'s kernel acts again, from the last horizon this thread took if it looked ahead and succeeded; else NaN. */
function freshFlowNow(pe: number): number {
  return flowsFresh ? kernelFlowNow(pe) : NaN;
}

/** The kept horizon, one load (a lower bound on the horizon now). */
export function keptHorizon(sh: SharedState): number {
  return sh.times[sh.layout.horizon];
}

/**
 * Release the held pieces that may now go alone (their claims alone on their routes,
 * no flow not claimed yet reaching their links before their end given the horizon `h`:
 * ./link-reach.ts; or their kernel's other channels quiet on them: ownKernelQuiet): each
 * goes from HELD to ALONE, and `wake` is called with its PE and direction. Returns how
 * many were released.
 */
export function releaseHeld(sh: SharedState, m: Machine, h: number, wake: (pe: number, dir: number) => void): number {
  const links = machineLinks(m);
  const reach = linkReach(m, links);
  const times = sh.times;
  const L = sh.layout;
  return moveHeld(sh, HOLD.ALONE, wake, (pe, dir) => {
    const route = links.route(pe, times[L.flow(pe, dir, FLOW.PEER)]);
    const endPs = times[L.flow(pe, dir, FLOW.END_PS)];
    // The floors before the claims, as a piece's own check reads them (lib/ipcq/link-timing.ts).
    if (!unreachedBefore(sh, reach, route, pe, endPs, h)) return false;
    const how = claimedBy(sh, route, pe, dir);
    return how === CLAIMED.ALONE || (how === CLAIMED.OWN_KERNEL && ownKernelQuiet(sh, pe, dir, endPs, freshFlowNow(pe) + reach.minLatencyPs(route)));
  });
}

/**
 * May a held piece of outbound channel (pe, dir), whose links only its own kernel's
 * channels claim, go alone? No flow of its kernel issues another send before the flow
 * bound of the horizon just taken (it acts no earlier: ./end-bounds.ts), so none joins a
 * link before `nextJoinPs`, which must be past the piece's end; and each other channel of
 * the PE is idle now with its last piece off the links by the piece's join (a send issued
 * since the horizon was taken is at or after that bound). A piece waits for this pass: its
 * own check at send time cannot know the kernel's next send.
 */
function ownKernelQuiet(sh: SharedState, pe: number, dir: number, endPs: number, nextJoinPs: number): boolean {
  if (!(nextJoinPs >= endPs)) return false; // NaN too: no fresh flow bound
  const L = sh.layout;
  const times = sh.times;
  const latencyPs = times[L.flow(pe, dir, FLOW.LATENCY_PS)];
  const joinPs = joinOf(pieceStartPs(times[L.flow(pe, dir, FLOW.START_PS)], latencyPs, times[L.flow(pe, dir, FLOW.JOIN_MIN_PS)]), latencyPs);
  for (let d = 0; d < DIR_COUNT; d++) {
    if (d === dir) continue;
    if (Atomics.load(sh.ctl, L.actor(L.channelActor(pe, d), ACTOR.STATE)) !== ACTOR_STATE.IDLE) return false;
    // Its last piece's end: alone, or the link arbiter's sent time plus its latency.
    const lastEndPs = Math.max(times[L.flow(pe, d, FLOW.ARRIVAL_PS)], times[L.flow(pe, d, FLOW.SENT_PS)] + times[L.flow(pe, d, FLOW.LATENCY_PS)]);
    if (lastEndPs > joinPs) return false;
  }
  return true;
}

/** Hand every held piece to the link arbiter (nothing left running could raise the horizon); `wake` is called with each one's PE and direction. */
export function arbitrateHeld(sh: SharedState, wake: (pe: number, dir: number) => void): number {
  return moveHeld(sh, HOLD.ARBITRATED, wake, () => true);
}

/** Move each held piece that `may` go from HELD to `to` (once, whoever else tries), waking it; how many moved. */
function moveHeld(sh: SharedState, to: number, wake: (pe: number, dir: number) => void, may: (pe: number, dir: number) => boolean): number {
  const L = sh.layout;
  const ctl = sh.ctl;
  let moved = 0;
  for (let pe = 0; pe < L.dims.pes; pe++) {
    for (let dir = 0; dir < DIR_COUNT; dir++) {
      const w = L.pe(pe, PE.HOLD + dir);
      if (Atomics.load(ctl, w) !== HOLD.HELD || !may(pe, dir)) continue;
      if (Atomics.compareExchange(ctl, w, HOLD.HELD, to) !== HOLD.HELD) continue;
      Atomics.sub(ctl, HEADER.HELD_PENDING, 1);
      moved++;
      wake(pe, dir);
    }
  }
  return moved;
}

/**
 * Is any actor other than a channel holding a piece running, or about to run? When
 * none is (and no command is in flight), nothing can raise the horizon but the held
 * pieces themselves: the coordinator hands them to the link arbiter. Take it with the
 * state epoch unchanged around it (the caller retries otherwise).
 */
export function othersMayRun(sh: SharedState): boolean {
  const L = sh.layout;
  const ctl = sh.ctl;
  if (Atomics.load(ctl, HEADER.COMMANDS_IN_FLIGHT) !== 0) return true;
  for (let a = 0; a < L.actors; a++) {
    const s = Atomics.load(ctl, L.actor(a, ACTOR.STATE));
    if (s === ACTOR_STATE.RUNNING) {
      if (isHoldingChannel(sh, a)) continue;
      return true;
    }
    if (s === ACTOR_STATE.BLOCKED && Atomics.load(ctl, Atomics.load(ctl, L.actor(a, ACTOR.WAIT_WORD))) >= Atomics.load(ctl, L.actor(a, ACTOR.WAIT_TARGET))) return true;
  }
  return false;
}

/** Is actor `a` an outbound DMA channel whose piece is held? */
function isHoldingChannel(sh: SharedState, a: number): boolean {
  const L = sh.layout;
  const pe = Math.floor(a / ACTORS_PER_PE);
  const channel = a - L.peActor(pe) - 1;
  if (pe >= L.dims.pes || channel < 0 || channel >= DIR_COUNT) return false;
  return Atomics.load(sh.ctl, L.pe(pe, PE.HOLD + channel)) === HOLD.HELD;
}

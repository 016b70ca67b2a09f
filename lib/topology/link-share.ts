// Runs on: any thread (the coordinator's link arbiter drives it; the channels'
// optimistic fast path uses its lone-flow rule; pure logic, no threads, no I/O). Owns: the fluid model of flows sharing physical links —
// max-min fair bandwidth sharing (progressive filling), driven incrementally
// and conservatively. Decision record: docs/decisions/0023-links-as-shared-resources.md.
//
// A flow is one transfer: `bytes` from `startPs` over `route` (link ids,
// lib/topology/links.ts), with `latencyPs` = its route's hops * alpha.
//
// Latency rule (SimGrid CM02, network_cm02.cpp: a comm's LMM variable has
// weight 0 until its latency is paid): a flow first spends `latencyPs` in a
// latency phase, taking no bandwidth, then enters the bandwidth phase at
// startPs + latencyPs, where it shares every link of its route. Its arrival
// (the last byte at the receiver) is the end of the bandwidth phase. Alone, a
// flow arrives at startPs + latencyPs + bytes / bw: kernbench's cut-through law
// k alpha + S / beta. `sentPs` = arrivalPs - latencyPs is when the sender's
// channel is free again (today's start + serial for a flow alone).
//
// Sharing rule (weighted max-min fairness, SimGrid's lmm with no TCP-gamma
// bound): progressive filling over the flows in their bandwidth phase. Raise a
// level L together; each unfixed flow's rate is L / penalty (penalty 1 by
// default; the link arbiter gives the route's latency, as CM02 does). When a
// link's capacity is used up, every flow crossing it is fixed. In order: the
// lowest level R_l / sum(1 / penalty) over links (R_l the capacity left, the
// sum over its unfixed flows) fixes the flows of every link at that level, in
// link-id order; repeat. Equal penalties give equal shares R_l / n_l.
//
// Rounding rule (one, on reported times only): internal times are doubles in
// ps, remaining bytes doubles; a flow's bytes are accounted only when its rate
// changes, so a flow's arrival, predicted at its last rate change T with `rem`
// bytes at `rate` bytes/ns, is reported as
//     floor(T) + ceil((T - floor(T)) + rem * 1000 / rate - 1e-6)
// and a flow that has run at its rate alone since it joined at T (its route's
// narrowest link; `alonePs` given) as floor(T) + ceil((T - floor(T)) + alonePs - 1e-6):
// a lone flow's time is its sender's own serialisation time, whatever other flows
// do elsewhere, so a sender can compute it without the model (aloneArrival, the
// optimistic fast path of lib/ipcq/link-timing.ts).
// Up, not to nearest: a reported time is never before the exact one (beyond
// 1e-6 ps), so a sender woken at it acts no earlier than the model's time, and
// the link arbiter can bound the wake time of every flow not yet final. A flow alone starts its bandwidth phase at an integer
// time with rem = bytes and rate = the link's GB/s, so it reports exactly
// startPs + latencyPs + transferPs(bytes, bw) (lib/time/virtual-time.ts). No
// rounding is ever fed back into the state, so there is no drift.
//
// Determinism: the result is a pure function of the set of flows. Rates are
// solved over links in id order and flows in id order; events are processed in
// time order, and flows that join or finish at the same instant in id order. The same flows give the
// same doubles, whatever thread or wall-clock order drove the calls.
//
// Conservative driving (the arbiter's contract): `advanceTo(safe)` promises no
// flow will be added that joins its bandwidth phase before safe, so nothing
// added later can change anything before safe: flows whose exact arrival is
// <= safe are final and returned. Adds may come in any order after that.
import { KernbenchError } from '../errors.js';
import { PS_PER_NS, ZERO_PS } from '../time/virtual-time.js';

/**
 * Reported times round up, less this much (ps): a time within it above a whole ps is
 * that ps (a flow alone, whose exact end is a whole ps give or take float error).
 */
export const EPSILON_PS = 1e-6;

export interface Flow {
  /** Unique id; breaks ties between flows added at the same start. */
  readonly id: number;
  /** Integer ps. */
  readonly startPs: number;
  readonly bytes: number;
  /** Link ids in order (may be empty: a transfer that crosses no link is not slowed by any). */
  readonly route: readonly number[];
  /** Integer ps: the route's latency (hops * alpha). */
  readonly latencyPs: number;
  /**
   * Sharing penalty (default 1): on a link, flows get bandwidth in proportion to
   * 1 / penalty. SimGrid's CM02 uses the route's latency (a comm's LMM variable has
   * sharing_penalty = latency: longer routes get less, TCP's RTT-unfairness).
   */
  readonly penalty?: number;
  /**
   * The flow's time alone (ps): `bytes` at its route's narrowest link. Given, the
   * model reports a flow that ran at that rate from its join to its end from this
   * time rather than from its bytes (see aloneArrival).
   */
  readonly alonePs?: number;
}

export interface FlowDone {
  id: number;
  /** Integer ps: the last byte at the receiver. */
  arrivalPs: number;
  /** Integer ps: arrivalPs - latencyPs, when the sender's channel is free. */
  sentPs: number;
}

interface Active {
  flow: Flow;
  /** When `rem` was last accounted: its join, then its last rate change (ps, double). */
  since: number;
  /** Bytes left to send at `since` (double). */
  rem: number;
  /** Current rate, bytes/ns (GB/s); 0 until the first solve after it joined. */
  rate: number;
  /** Its rate alone (the narrowest link of its route). */
  aloneRate: number;
  /** Ran at `aloneRate` since it joined, with `alonePs` given: it ends `alonePs` after `since`. */
  alone: boolean;
}

/** The join time (ps, double) of a flow that starts at `startPs` and pays `latencyPs` first (the model's and the fast path's one expression). */
export function joinOf(startPs: number, latencyPs: number): number {
  return startPs + latencyPs;
}

/**
 * A piece ready at `readyPs` on a route of `latencyPs`, entering its links no earlier
 * than `joinMinPs` (lib/kernel/transfers.ts's join floor): the start the model is given
 * (the link arbiter's and the fast path's one expression); its join is
 * joinOf(start, latencyPs).
 */
export function pieceStartPs(readyPs: number, latencyPs: number, joinMinPs: number): number {
  return Math.max(joinOf(readyPs, latencyPs), joinMinPs) - latencyPs;
}

/** Bytes of a piece whose serialisation alone takes `serialPs` at `gbPerS` (0: no bandwidth phase). */
export function pieceBytes(serialPs: number, gbPerS: number): number {
  return serialPs === 0 || !Number.isFinite(gbPerS) ? 0 : (serialPs * gbPerS) / PS_PER_NS;
}

/**
 * A flow alone from its join at `joinPs` for `alonePs`: its exact end (a double, what
 * the model compares) and its reported arrival (the rounding rule). The model reports
 * exactly this for every flow that ran at its rate alone from join to end.
 */
export function aloneArrival(joinPs: number, alonePs: number): { endPs: number; arrivalPs: number } {
  return { endPs: joinPs + alonePs, arrivalPs: aloneArrivalPs(joinPs, alonePs) };
}

/** aloneArrival's arrivalPs alone (its endPs is joinPs + alonePs). */
export function aloneArrivalPs(joinPs: number, alonePs: number): number {
  const whole = Math.floor(joinPs);
  return whole + Math.ceil(joinPs - whole + alonePs - EPSILON_PS);
}

/** The narrowest capacity (GB/s) on `route`: a flow's rate alone (Infinity for an empty route). */
export function aloneRateOf(route: readonly number[], gbPerS: ArrayLike<number>): number {
  let r = Infinity;
  for (let i = 0; i < route.length; i++) r = Math.min(r, gbPerS[route[i]]);
  return r;
}

export class LinkShare {
  /** Flows in their latency phase, with the time each joins the bandwidth phase. */
  private readonly waiting: { flow: Flow; join: number }[] = [];
  /** Flows in their bandwidth phase, in the order they entered it. */
  private active: Active[] = [];
  /** Time (ps, double) of the last event processed (flows account their bytes from their own `since`). */
  private now = ZERO_PS;
  /** The largest safe time promised so far: no flow may start before it. */
  private safe = -Infinity;

  // solve's scratch, by link id and kept between solves (a solve runs at every event, over
  // every active flow): a link's entries are this solve's once `mark` holds its stamp.
  private stamp = 0;
  private readonly mark: Float64Array;
  /** The links of this solve, in the order first met (then sorted into id order). */
  private readonly used: Int32Array;
  /** What is left of each link's capacity, and its level, in this solve. */
  private readonly left: Float64Array;
  private readonly level: Float64Array;
  /** Each link's flows in id order, made as a solve first meets the link: most links of a large machine never carry a flow the arbiter times. */
  private readonly flowsOn: Active[][];
  private readonly unfixed: Active[] = [];
  /** The active flows' rates before the solve, in id order. */
  private before = new Float64Array(16);

  /** `gbPerS[l]`: capacity of link l in GB/s (bytes/ns), e.g. from Links.classOf and timing.links. */
  constructor(private readonly gbPerS: ArrayLike<number>) {
    const n = gbPerS.length;
    this.mark = new Float64Array(n);
    this.used = new Int32Array(n);
    this.left = new Float64Array(n);
    this.level = new Float64Array(n);
    this.flowsOn = new Array<Active[]>(n);
  }

  /** Number of flows not yet returned by advanceTo. */
  get pending(): number {
    return this.waiting.length + this.active.length;
  }

  /**
   * Add a flow that enters its bandwidth phase (start + latency) no earlier than
   * the safe time of the last advanceTo, less half a picosecond: a sender woken
   * by a reported (rounded) end may start up to 0.5 ps before the exact end the
   * model stopped at; such a flow joins at the model's time instead. Flows may
   * come in any order: flows joining at one instant are taken in id order.
   */
  add(flow: Flow): void {
    const join = joinOf(flow.startPs, flow.latencyPs);
    if (join < this.safe - 0.5) {
      throw new KernbenchError('ERR_INTERNAL', `LinkShare.add: flow ${flow.id} joins at ${join} ps, before the safe time ${this.safe} ps`);
    }
    this.waiting.push({ flow, join: Math.max(join, this.now) });
  }

  /** The safe time reached (ps, double): every flow not yet returned ends after it. */
  get safePs(): number {
    return this.safe;
  }

  /**
   * Run the model up to `safePs` (no flow will be added that joins before it)
   * and return the flows whose arrival is now final (exact arrival <= safePs),
   * in order of arrival, then id. With `firstEnd`, stop at the first instant a
   * flow ends: the senders it frees may add flows from then on, so that instant
   * becomes the safe time (the link arbiter's way, lib/coordinator/link-arbiter.ts).
   */
  advanceTo(safePs: number, firstEnd = false): FlowDone[] {
    const done: FlowDone[] = [];
    let reached = safePs;
    for (;;) {
      let nextJoin = Infinity;
      for (const w of this.waiting) nextJoin = Math.min(nextJoin, w.join);
      let nextEnd = Infinity;
      for (const a of this.active) nextEnd = Math.min(nextEnd, this.endOf(a));
      const t = Math.min(nextJoin, nextEnd);
      if (t > safePs || t === Infinity) break;
      const before = done.length;
      if (nextEnd === t) {
        // Every flow predicted to end at t ends, reported from its state at the
        // last rate change (before accounting up to t), in id order.
        const ending = this.active.filter((a) => this.endOf(a) === t).sort((x, y) => x.flow.id - y.flow.id);
        for (const a of ending) done.push(this.report(a));
        const gone = new Set(ending);
        this.active = this.active.filter((a) => !gone.has(a));
      }
      this.progress(t);
      // Flows whose latency phase ends at t join, in id order.
      const joining = this.waiting.filter((w) => w.join === t).sort((x, y) => x.flow.id - y.flow.id);
      if (joining.length > 0) {
        const joined = new Set(joining);
        this.waiting.splice(0, this.waiting.length, ...this.waiting.filter((w) => !joined.has(w)));
      }
      for (const { flow: f } of joining) {
        if (f.bytes === 0 || f.route.length === 0) done.push({ id: f.id, arrivalPs: t, sentPs: f.startPs });
        else this.active.push({ flow: f, since: t, rem: f.bytes, rate: 0, aloneRate: aloneRateOf(f.route, this.gbPerS), alone: f.alonePs !== undefined });
      }
      this.solve();
      if (firstEnd && done.length > before) {
        reached = t;
        break;
      }
    }
    this.safe = Math.max(this.safe, reached);
    // The state stays at the last event: accounting up to safePs would round
    // rem differently for different call sequences (the result must depend on
    // the flows only).
    return done;
  }

  /** Time (ps) an active flow still needs from `since` at its current rate. */
  private leftPs(a: Active): number {
    return a.alone ? (a.flow.alonePs as number) : (a.rem * PS_PER_NS) / a.rate;
  }

  /** Exact (double) predicted arrival of an active flow at its current rate. */
  private endOf(a: Active): number {
    return a.since + this.leftPs(a);
  }

  /** The one rounding rule (see the header). */
  private report(a: Active): FlowDone {
    const whole = Math.floor(a.since);
    const arrivalPs = whole + Math.ceil(a.since - whole + this.leftPs(a) - EPSILON_PS);
    return { id: a.flow.id, arrivalPs, sentPs: arrivalPs - a.flow.latencyPs };
  }

  /** The model's time moves to t (bytes are accounted per flow when its rate changes: solve). */
  private progress(t: number): void {
    this.now = t;
  }

  /** Max-min fair rates of the active flows (weighted progressive filling, see the header). */
  private solve(): void {
    // Id order: the float sums below must not depend on the order flows joined.
    const active = this.active.sort((x, y) => x.flow.id - y.flow.id);
    if (this.before.length < active.length) this.before = new Float64Array(2 * active.length);
    const { before, mark, used, left, level, flowsOn, unfixed } = this;
    // The links the flows cross, each with its capacity and its flows in id order (a
    // route that crosses a link twice counts once per crossing, as in SimGrid's lmm).
    const stamp = ++this.stamp;
    let count = 0;
    for (let i = 0; i < active.length; i++) {
      const a = active[i];
      before[i] = a.rate;
      a.rate = -1;
      const route = a.flow.route;
      for (let k = 0; k < route.length; k++) {
        const l = route[k];
        if (mark[l] !== stamp) {
          mark[l] = stamp;
          left[l] = this.gbPerS[l];
          if (flowsOn[l] === undefined) flowsOn[l] = [];
          else flowsOn[l].length = 0;
          used[count++] = l;
        }
        flowsOn[l].push(a);
      }
    }
    const ids = used.subarray(0, count).sort();
    // Each round: every link's level (the common value of rate * penalty its unfixed flows
    // would reach when it is full); the lowest fixes the flows of every link at that level.
    for (;;) {
      let lowest = Infinity;
      for (let i = 0; i < count; i++) {
        const l = ids[i];
        const lv = levelOf(left[l], flowsOn[l]);
        level[l] = lv;
        lowest = Math.min(lowest, lv);
      }
      if (lowest === Infinity) break;
      for (let i = 0; i < count; i++) {
        const l = ids[i];
        if (level[l] !== lowest) continue;
        unfixed.length = 0;
        for (const a of flowsOn[l]) if (a.rate < 0) unfixed.push(a);
        // Equal penalties (the usual case): an exact equal split of what is left.
        let equal = true;
        for (let k = 1; k < unfixed.length; k++) if (penaltyOf(unfixed[k]) !== penaltyOf(unfixed[0])) equal = false;
        const leftHere = left[l];
        for (const a of unfixed) {
          if (a.rate >= 0) continue; // fixed earlier in this loop (a route crossing the link twice)
          a.rate = equal ? leftHere / unfixed.length : lowest / penaltyOf(a);
        }
        for (const a of unfixed) {
          const route = a.flow.route;
          for (let k = 0; k < route.length; k++) left[route[k]] -= a.rate;
        }
      }
    }
    // Account a flow's bytes only where its rate changed (a flow that just joined has
    // `since` = now and all its bytes): a flow whose rate never changes ends exactly
    // where it was predicted when it joined, whatever happens on other links.
    for (let i = 0; i < active.length; i++) {
      const a = active[i];
      const old = before[i];
      if (old > 0 && a.rate !== old) {
        a.rem -= (old * (this.now - a.since)) / PS_PER_NS;
        a.since = this.now;
        a.alone = false;
      } else if (old === 0 && a.rate !== a.aloneRate) a.alone = false;
    }
  }
}

/** The level at which a link fills: what is `left` over the sum of its unfixed flows' 1 / penalty (Infinity: none unfixed). */
function levelOf(left: number, flows: readonly Active[]): number {
  let inv = 0;
  let n = 0;
  let p0 = 0;
  let equal = true;
  for (const a of flows) {
    if (a.rate >= 0) continue;
    const p = penaltyOf(a);
    if (n === 0) p0 = p;
    else if (p !== p0) equal = false;
    inv += 1 / p;
    n++;
  }
  if (n === 0) return Infinity;
  return equal ? (left / n) * p0 : left / inv;
}

function penaltyOf(a: Active): number {
  return a.flow.penalty ?? 1;
}

// Runs on: executor threads and the coordinator thread (inside a launch horizon,
// lib/sync/link-claims.ts). Owns: a lower bound on when each active PE's kernel
// ends, looking ahead through the receives it has issued and not yet got
// (docs/decisions/0101-the-horizon-looks-through-receives.md).
//
// A kernel drains every operation it issued before it ends, so it ends no earlier
// than the arrival of any message one of its receives still waits for. A message
// not yet published on its ring is sent by the ring's sender later: by its DMA
// channel, no earlier than the channel's clock (a held piece: no earlier than its
// end alone), or by a send its kernel (or a branch) has still to issue, no earlier
// than that flow's own bound; it then flies the route's latency. A flow blocked on
// a receive of its own is bounded the same way, so the bounds chain along a ring
// (a few rounds; each round's values are lower bounds, so stopping early is sound).
//
// Every state, clock and wait is read first; the rings' tails after, so a message
// still unpublished then was unpublished when its sender was read, and is sent at
// or after what was read of it. The caller checks the state epoch around it all.
import { ACTOR, ACTOR_STATE, DIR_COUNT, FLOW, PE, WAIT_KIND } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';
import { CostModel } from '../topology/cost-model.js';
import type { Machine } from '../topology/machine.js';
import { actorWord } from './owned.js';

/** Rounds of the chain along senders: past them, a bound is left where it got to (still a lower bound). */
const ROUNDS = 4;
/** A held piece (PE.HOLD value 1, lib/sync/link-claims.ts). */
const HELD = 1;

const costsOf = new WeakMap<Machine, CostModel>();
function costs(m: Machine): CostModel {
  let c = costsOf.get(m);
  if (!c) costsOf.set(m, (c = new CostModel(m)));
  return c;
}

/** Actor offsets within a PE (lib/shm/layout.ts channelActor, branchActor): inbound channels, then branches. */
const IN = 1 + DIR_COUNT;
const BRANCH = 1 + 2 * DIR_COUNT;

/** Scratch arrays, per thread, grown to the largest layout seen (a horizon is asked for often). */
class Scratch {
  state = new Int8Array(0);
  clock = new Float64Array(0);
  /** An inbound channel blocked on data: its ring, else -1. */
  waitRing = new Int32Array(0);
  /** A kernel or branch blocked on one of its receives: the inbound channel (0..3), else -1. */
  waitIn = new Int8Array(0);
  /** A kernel or branch blocked on one of its sends: the outbound channel (0..3), else -1. */
  waitOut = new Int8Array(0);
  /** Per outbound channel: the end alone of its held piece, else -Infinity. */
  held = new Float64Array(0);
  /** Per PE: the earliest any flow of its kernel (main flow or branch) acts again; NaN: none active. */
  flowNow = new Float64Array(0);
  /** Actor, wait word, target of every wait the lookahead uses. */
  waits: number[] = [];
  fit(actors: number, pes: number): void {
    if (this.state.length < actors) {
      this.state = new Int8Array(actors);
      this.clock = new Float64Array(actors);
      this.waitRing = new Int32Array(actors);
      this.waitIn = new Int8Array(actors);
      this.waitOut = new Int8Array(actors);
    }
    if (this.flowNow.length < pes) {
      this.held = new Float64Array(pes * DIR_COUNT);
      this.flowNow = new Float64Array(pes);
    }
    this.state.fill(ACTOR_STATE.IDLE, 0, actors);
    this.waitRing.fill(-1, 0, actors);
    this.waitIn.fill(-1, 0, actors);
    this.waitOut.fill(-1, 0, actors);
    this.held.fill(-Infinity, 0, pes * DIR_COUNT);
    this.flowNow.fill(NaN, 0, pes);
    this.waits.length = 0;
  }
}
const scratch = new Scratch();

/** The earliest any flow of PE `pe`'s kernel acts again, as this thread's last kernelEndBounds found it (NaN: no active kernel). */
export function kernelFlowNow(pe: number): number {
  return pe < scratch.flowNow.length ? scratch.flowNow[pe] : NaN;
}

/**
 * The lookahead of one kernelEndBounds call: what its bounds read (the call's scratch,
 * layout and costs), with the bounds as methods rather than closures made each call: a
 * horizon is taken every few dozen messages, and closures made anew each time are each
 * optimised again by V8 (decision 0230).
 */
class Lookahead {
  sc = scratch;
  sh: SharedState | null = null;
  cm: CostModel | null = null;
  per = 1;

  isActive(a: number): boolean {
    const s = this.sc.state[a];
    return s === ACTOR_STATE.RUNNING || s === ACTOR_STATE.BLOCKED;
  }

  /**
   * The earliest the receive inbound channel actor `a` works on completes: when the message
   * it waits for arrives; with none awaited (its wait met, or it is copying one in), its
   * clock (its operations complete in issue order); -Infinity when it is idle.
   */
  arrival(a: number): number {
    const sc = this.sc;
    const per = this.per;
    const ring = sc.waitRing[a];
    if (ring < 0) return this.isActive(a) ? sc.clock[a] : -Infinity;
    const L = (this.sh as SharedState).layout;
    const s = L.senderOfRing(ring);
    const d = ring % DIR_COUNT;
    const flight = (this.cm as CostModel).flightPs(s, (a - (a % per)) / per);
    const c = L.channelActor(s, d);
    // The channel idle: sent by a flow of its kernel not yet issued, no earlier than that flow acts again.
    if (!this.isActive(c)) return Number.isNaN(sc.flowNow[s]) ? -Infinity : sc.flowNow[s] + flight;
    // The channel busy: by it, on its way, or by a send issued later, queued behind its work
    // (its operations run in issue order: lib/ipcq/channel-queue.ts). No earlier than its
    // clock; a held piece (or one after it) no earlier than the held one's end alone.
    const h = sc.held[s * DIR_COUNT + d];
    return Math.max(sc.clock[c] + flight, h - 1);
  }

  /**
   * The earliest the send outbound channel actor `c` works on settles: its last byte left no
   * earlier than the channel's clock, and for a held piece than its end alone less its
   * flight (written with it: lib/ipcq/link-timing.ts); -Infinity when the channel is idle.
   */
  sent(c: number, pe: number, d: number): number {
    if (!this.isActive(c)) return -Infinity;
    const sh = this.sh as SharedState;
    return Math.max(this.sc.clock[c], this.sc.held[pe * DIR_COUNT + d] - sh.times[sh.layout.flow(pe, d, FLOW.LATENCY_PS)]);
  }

  flowActorNow(a: number): number {
    const sc = this.sc;
    const per = this.per;
    if (sc.waitIn[a] >= 0) return Math.max(sc.clock[a], this.arrival(a - (a % per) + IN + sc.waitIn[a]));
    if (sc.waitOut[a] < 0) return sc.clock[a];
    const pe = (a - (a % per)) / per;
    return Math.max(sc.clock[a], this.sent(pe * per + 1 + sc.waitOut[a], pe, sc.waitOut[a]));
  }
}
const look = new Lookahead();

/**
 * Per PE, a lower bound on the end of its running kernel, written into `out` (NaN for
 * a PE with no active kernel). `floor(sh, pe)` is the caller's bound without lookahead
 * (its clock and its sends' arrivals); `m` gives routes' latencies. Take it inside an
 * epoch snapshot.
 */
export function kernelEndBounds(sh: SharedState, m: Machine, floor: (sh: SharedState, pe: number) => number, out: Float64Array): void {
  const L = sh.layout;
  const ctl = sh.ctl;
  const times = sh.times;
  const pes = L.dims.pes;
  const per = L.peActor(1) - L.peActor(0);
  const peActors = pes * per;
  const sc = scratch;
  sc.fit(peActors, pes);
  const { state, clock, waitRing, waitIn, waitOut, held, flowNow, waits } = sc;
  // Pass 1: states, clocks and waits of the active PE actors (the bitmap names them).
  const active0 = L.activeWord(0);
  for (let wi = 0; wi < L.activeWords && wi * 32 < peActors; wi++) {
    let bits = Atomics.load(ctl, active0 + wi);
    while (bits !== 0) {
      const low = bits & -bits;
      bits ^= low;
      const a = wi * 32 + (31 - Math.clz32(low));
      if (a >= peActors) break;
      const s = actorWord(sh, a, ACTOR.STATE);
      if (s !== ACTOR_STATE.RUNNING && s !== ACTOR_STATE.BLOCKED) continue;
      state[a] = s;
      clock[a] = times[L.clock(a)];
      const i = a % per;
      if (i >= 1 && i < IN) {
        const pe = (a - i) / per;
        if (Atomics.load(ctl, L.pe(pe, PE.HOLD + i - 1)) === HELD) held[pe * DIR_COUNT + i - 1] = times[L.flow(pe, i - 1, FLOW.END_PS)];
      }
      if (s !== ACTOR_STATE.BLOCKED) continue;
      const kind = actorWord(sh, a, ACTOR.WAIT_KIND);
      const aux = actorWord(sh, a, ACTOR.WAIT_AUX);
      if (i >= IN && i < BRANCH && kind === WAIT_KIND.IPCQ_DATA) waitRing[a] = aux;
      else if ((i === 0 || i >= BRANCH) && kind === WAIT_KIND.CHANNEL && aux >= DIR_COUNT) waitIn[a] = aux - DIR_COUNT;
      else if ((i === 0 || i >= BRANCH) && kind === WAIT_KIND.CHANNEL && aux >= 0) waitOut[a] = aux;
      else continue;
      waits.push(a, actorWord(sh, a, ACTOR.WAIT_WORD), actorWord(sh, a, ACTOR.WAIT_TARGET));
    }
  }
  // Pass 2, after every read above: a wait met by now (its message published, its receive done) gives no lookahead.
  for (let k = 0; k < waits.length; k += 3) {
    if (Atomics.load(ctl, waits[k + 1]) < waits[k + 2]) continue;
    waitRing[waits[k]] = -1;
    waitIn[waits[k]] = -1;
    waitOut[waits[k]] = -1;
  }
  const lk = look;
  lk.sh = sh;
  lk.cm = costs(m);
  lk.per = per;
  for (let round = 0; round < ROUNDS; round++) {
    let changed = false;
    for (let pe = 0; pe < pes; pe++) {
      const k = pe * per;
      let b = Infinity;
      if (lk.isActive(k)) b = lk.flowActorNow(k);
      for (let i = BRANCH; i < per; i++) if (lk.isActive(k + i)) b = Math.min(b, lk.flowActorNow(k + i));
      const v = b === Infinity ? NaN : b;
      if (v !== flowNow[pe] && !(Number.isNaN(v) && Number.isNaN(flowNow[pe]))) {
        flowNow[pe] = v;
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (let pe = 0; pe < pes; pe++) {
    const k = pe * per;
    if (!lk.isActive(k)) {
      out[pe] = NaN;
      continue;
    }
    // It drains every receive it issued before it ends.
    let e = Math.max(floor(sh, pe), lk.flowActorNow(k));
    for (let d = 0; d < DIR_COUNT; d++) e = Math.max(e, lk.arrival(k + IN + d));
    out[pe] = e;
  }
}

// Runs on: main, at session end. Owns: the race check of --check-races. It
// rebuilds each actor's vector clock from the threads' records (./log.ts) and
// finds two accesses to the same device bytes, at least one a write, by two
// actors with no happens-before path between them (DJIT+-style vector clocks,
// computed after the run: docs/decisions/0021-race-detection-after-the-run.md).
//
// Clocks: each actor's own component starts at 1 and goes up after each of its
// releases; an acquire of key K joins the clocks of every release of K (and of
// keys linked to K). Access a happens before access b iff b's clock has a's
// actor at a's epoch or later. An acquire is processed only once every release
// of its keys is, so the result does not depend on the order of the records.
import { KernbenchError, formatPs } from '../errors.js';
import type { ActorMeta, RaceEvent, RaceLogData } from './log.js';

type Clock = Map<number, number>;

interface Access {
  actor: number;
  epoch: number;
  clock: Clock;
  ev: Extract<RaceEvent, { k: 'acc' }>;
}

/** One side of a race, as the report gives it. */
export interface RaceSide {
  actor: string;
  op: 'read' | 'write';
  atPs: number;
}

export interface DataRace {
  tensor: string;
  shard: string;
  /** Elements of the shard both touch: [first, end). */
  elements: [number, number];
  first: RaceSide;
  second: RaceSide;
}

/** The first race of the run (in the actors' deterministic order), or null. */
export function findRace(logs: RaceLogData[]): DataRace | null {
  const events = new Map<string, RaceEvent[]>();
  const meta = new Map<string, ActorMeta>();
  const links = new Map<string, string[]>();
  for (const l of logs) {
    for (const [a, evs] of l.events) events.set(a, [...(events.get(a) ?? []), ...evs]);
    for (const [a, m] of l.meta) meta.set(a, m);
    for (const [from, to] of l.links) links.set(to, [...(links.get(to) ?? []), from]);
  }
  const ids = [...events.keys()].sort();
  const total = new Map<string, number>();
  for (const evs of events.values()) for (const e of evs) if (e.k === 'rel') for (const key of e.keys) total.set(key, (total.get(key) ?? 0) + 1);
  const released = new Map<string, number>();
  const keyClock = new Map<string, Clock>();
  const clocks: Clock[] = ids.map((_, i) => new Map([[i, 1]]));
  const next = ids.map(() => 0);
  const accesses: Access[] = [];
  const keysOf = (key: string): string[] => [key, ...(links.get(key) ?? [])];
  const ready = (keys: string[]): boolean => keys.every((k) => keysOf(k).every((x) => (released.get(x) ?? 0) >= (total.get(x) ?? 0)));

  // A release that never came (its actor failed first) would block an acquire for
  // ever: then the first blocked actor, in actor order, takes its acquire as it is.
  let forced = -1;
  for (;;) {
    let progress = false;
    for (let i = 0; i < ids.length; i++) {
      const evs = events.get(ids[i]) ?? [];
      while (next[i] < evs.length) {
        const e = evs[next[i]];
        if (e.k === 'acq' && forced !== i && !ready(e.keys)) break;
        if (forced === i) forced = -1;
        const own = clocks[i];
        if (e.k === 'acc') {
          accesses.push({ actor: i, epoch: own.get(i) ?? 1, clock: own, ev: e });
        } else if (e.k === 'rel') {
          for (const key of e.keys) {
            keyClock.set(key, join(keyClock.get(key), own));
            released.set(key, (released.get(key) ?? 0) + 1);
          }
          // Copy on change: earlier accesses keep the clock they were made under.
          clocks[i] = new Map(own).set(i, (own.get(i) ?? 1) + 1);
        } else {
          let c = new Map(own);
          for (const key of e.keys) for (const x of keysOf(key)) c = join(c, keyClock.get(x), true);
          clocks[i] = c;
        }
        next[i]++;
        progress = true;
      }
    }
    if (progress) continue;
    forced = next.findIndex((n, j) => n < (events.get(ids[j]) ?? []).length);
    if (forced < 0) break;
  }
  return firstRace(accesses, ids, meta);
}

/** `a` joined with `b`; in place when `mutable` (a is then a private copy). */
function join(a: Clock | undefined, b: Clock | undefined, mutable = false): Clock {
  if (!a) return new Map(b);
  if (!b) return a;
  const out = mutable ? a : new Map(a);
  for (const [k, v] of b) if ((out.get(k) ?? 0) < v) out.set(k, v);
  return out;
}

function before(a: Access, b: Access): boolean {
  return (b.clock.get(a.actor) ?? 0) >= a.epoch;
}

function firstRace(accesses: Access[], ids: string[], meta: Map<string, ActorMeta>): DataRace | null {
  const orderOf = (i: number): number[] => meta.get(ids[i])?.order ?? [Number.MAX_SAFE_INTEGER];
  const labelOf = (i: number): string => meta.get(ids[i])?.label ?? ids[i];
  const byRegion = new Map<string, Access[]>();
  for (const a of accesses) {
    const list = byRegion.get(a.ev.region);
    if (list) list.push(a);
    else byRegion.set(a.ev.region, [a]);
  }
  let best: { a: Access; b: Access; key: number[] } | null = null;
  for (const [, list] of [...byRegion].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
    list.sort((x, y) => x.ev.lo - y.ev.lo);
    const active: Access[] = [];
    for (const b of list) {
      for (let j = active.length - 1; j >= 0; j--) if (active[j].ev.hi <= b.ev.lo) active.splice(j, 1);
      for (const a of active) {
        if (a.actor === b.actor || (!a.ev.write && !b.ev.write) || before(a, b) || before(b, a)) continue;
        // Deterministic choice: by the two actors' order (never by thread or wall time), then by address.
        const [x, y] = cmp(orderOf(a.actor), orderOf(b.actor)) <= 0 ? [a, b] : [b, a];
        const key = [...orderOf(x.actor), -1, ...orderOf(y.actor), -1, Math.max(a.ev.lo, b.ev.lo)];
        if (!best || cmp(key, best.key) < 0) best = { a: x, b: y, key };
      }
      active.push(b);
    }
  }
  if (!best) return null;
  const { a, b } = best;
  const lo = Math.max(a.ev.elements[0], b.ev.elements[0]);
  const hi = Math.min(a.ev.elements[1], b.ev.elements[1]);
  const side = (x: Access): RaceSide => ({ actor: labelOf(x.actor), op: x.ev.write ? 'write' : 'read', atPs: x.ev.atPs });
  return { tensor: a.ev.tensor, shard: a.ev.shard, elements: [lo, hi], first: side(a), second: side(b) };
}

function cmp(x: number[], y: number[]): number {
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** ERR_DATA_RACE for a race found. */
export function dataRaceError(r: DataRace): KernbenchError {
  const at = (s: RaceSide): string => `${s.actor} ${s.op}s at ${formatPs(s.atPs)}`;
  return new KernbenchError(
    'ERR_DATA_RACE',
    `data race on tensor '${r.tensor}', elements [${r.elements[0]}, ${r.elements[1]}) of its shard on ${r.shard}: ${at(r.first)} and ${at(r.second)}, with no IPCQ message, barrier, launch/wait or spawn/join ordering them; order them (e.g. a barrier between the writes), got two unordered accesses, at least one a write`,
    { atPs: r.second.atPs },
  );
}

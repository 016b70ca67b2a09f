// Runs on: the coordinator thread (pure logic over shared views, like
// ./deadlock.ts; test/find-deadlock.test.ts runs it without threads). Owns: the
// few lines a deadlock report begins with — how many actors wait, grouped by
// what they wait for, and the wait-for cycles between PEs — so that a report
// of a thousand ranks reads like one of three. Linear in the waiters.
import { ACTOR, ACTORS_PER_PE, DIRECTIONS, WAIT_KIND } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';
import type { Machine } from '../topology/machine.js';
import { formatPs } from '../errors.js';

/** Most groups the summary lists one a line; the rest are counted in one more line. */
const MAX_GROUPS = 6;
/** Most cycles the summary names; the rest are counted. */
const MAX_CYCLES = 2;
/** Most PEs named along one cycle before `...`. */
const CYCLE_NAMES = 3;

/** The role of an actor, in the plural, with the possessive that the wait's phrase uses. */
function role(sh: SharedState, a: number): { key: string; one: string; many: string } {
  const L = sh.layout;
  const peActors = L.dims.pes * ACTORS_PER_PE;
  if (a >= peActors) {
    const h = a - peActors;
    return h === L.mainHost ? { key: 'main', one: 'the main host', many: 'main hosts' } : { key: 'host', one: 'one rank host', many: 'rank hosts' };
  }
  const k = a % ACTORS_PER_PE;
  if (k === 0) return { key: 'kernel', one: "one PE's kernel", many: "PEs' kernels" };
  if (k > 2 * 4) return { key: 'branch', one: 'one tl.parallel branch', many: 'tl.parallel branches' };
  const ch = k - 1;
  const dir = DIRECTIONS[ch % 4];
  return ch < 4 ? { key: `out-${dir}`, one: `one PE's outbound ${dir} channel`, many: `PEs' outbound ${dir} channels` } : { key: `in-${dir}`, one: `one PE's inbound ${dir} channel`, many: `PEs' inbound ${dir} channels` };
}

/** What the wait is, without the waiter's own PE or numbers that vary along a group (those are ranges). */
function relation(sh: SharedState, a: number, kind: number, aux: number): string {
  const L = sh.layout;
  const set = (ring: number): string => (L.setOfRing(ring) === 0 ? '' : ` of channel set ${L.setOfRing(ring)}`);
  const k = a % ACTORS_PER_PE;
  switch (kind) {
    case WAIT_KIND.IPCQ_DATA:
      // An inbound channel names the side it receives on; any other actor the sender's ring.
      return k > 4 && k <= 8 && a < L.dims.pes * ACTORS_PER_PE ? `wait for IPCQ data from their ${DIRECTIONS[(k - 1) % 4]} neighbour${set(aux)}` : `wait for IPCQ data on a neighbour's ${DIRECTIONS[aux % 4]} ring${set(aux)}`;
    case WAIT_KIND.IPCQ_CREDIT:
      return `wait for a credit on their ${DIRECTIONS[aux % 4]} ring${set(aux)}`;
    case WAIT_KIND.KERNEL_DONE:
      return 'wait for a kernel to finish';
    case WAIT_KIND.CHANNEL:
      return `wait for their ${aux < 4 ? 'send to' : 'receive from'} ${DIRECTIONS[aux % 4]}`;
    case WAIT_KIND.BARRIER:
      return 'wait at a barrier';
    case WAIT_KIND.RANKS_DONE:
      return `wait for ${aux} spawned rank(s) to finish`;
    case WAIT_KIND.GRANT:
      return aux < 0 ? 'wait to run an ordered launch' : 'wait for a grant on a memory channel';
    case WAIT_KIND.COMMAND:
      return 'wait for a free command slot';
    case WAIT_KIND.LINK:
      return 'wait for a piece to cross the shared links';
    default:
      return `wait (kind ${kind})`;
  }
}

interface Group {
  count: number;
  one: string;
  many: string;
  relation: string;
  kind: number;
  minMsg: number;
  maxMsg: number;
  minPs: number;
  maxPs: number;
}

const range = (lo: string, hi: string): string => (lo === hi ? lo : `${lo} to ${hi}`);

function groupLine(g: Group): string {
  const who = g.count === 1 ? g.one : `${g.count} ${g.many}`;
  const verb = g.count === 1 ? g.relation.replace(/^wait/, 'waits').replace(' their ', ' its ') : g.relation;
  const msg = g.kind === WAIT_KIND.IPCQ_DATA || g.kind === WAIT_KIND.IPCQ_CREDIT ? `, message ${range(`#${g.minMsg}`, `#${g.maxMsg}`)},` : '';
  const since = g.kind === WAIT_KIND.RANKS_DONE || g.kind === WAIT_KIND.COMMAND ? '' : ` since ${range(formatPs(g.minPs), formatPs(g.maxPs))}`;
  return `${who} ${verb}${msg}${since}`;
}

/**
 * The summary of a deadlock whose BLOCKED actors are `blocked` (in actor
 * order): one line per group of waiters that wait for the same thing (largest
 * first, at most MAX_GROUPS, then a count of the rest), then the cycles the
 * PEs' waits for each other's IPCQ data form.
 */
export function summarizeDeadlock(sh: SharedState, m: Machine, blocked: readonly number[]): string[] {
  const L = sh.layout;
  const ctl = sh.ctl;
  const groups = new Map<string, Group>();
  // PE-level wait-for edges: a PE some actor of which waits for IPCQ data -> the sending PE.
  const peActors = L.dims.pes * ACTORS_PER_PE;
  const edges = new Map<number, number[]>();
  for (const a of blocked) {
    const kind = Atomics.load(ctl, L.actor(a, ACTOR.WAIT_KIND));
    const aux = Atomics.load(ctl, L.actor(a, ACTOR.WAIT_AUX));
    const target = Atomics.load(ctl, L.actor(a, ACTOR.WAIT_TARGET));
    const ps = sh.times[L.clock(a)];
    const r = role(sh, a);
    const rel = relation(sh, a, kind, aux);
    const key = `${r.key}|${rel}`;
    let g = groups.get(key);
    if (!g) {
      g = { count: 0, one: r.one, many: r.many, relation: rel, kind, minMsg: Infinity, maxMsg: -Infinity, minPs: Infinity, maxPs: -Infinity };
      groups.set(key, g);
    }
    g.count++;
    g.minMsg = Math.min(g.minMsg, target - 1);
    g.maxMsg = Math.max(g.maxMsg, target - 1);
    g.minPs = Math.min(g.minPs, ps);
    g.maxPs = Math.max(g.maxPs, ps);
    if (kind === WAIT_KIND.IPCQ_DATA && a < peActors) {
      const from = Math.floor(a / ACTORS_PER_PE);
      const to = L.senderOfRing(aux);
      const out = edges.get(from);
      if (out) {
        if (!out.includes(to)) out.push(to);
      } else edges.set(from, [to]);
    }
  }
  const total = blocked.length;
  const lines = [`${total} actor${total === 1 ? '' : 's'} wait${total === 1 ? 's' : ''}:`];
  const sorted = [...groups.values()].sort((x, y) => y.count - x.count); // stable: ties keep actor order
  for (const g of sorted.slice(0, MAX_GROUPS)) lines.push(`  ${groupLine(g)}`);
  if (sorted.length > MAX_GROUPS) {
    const rest = sorted.slice(MAX_GROUPS).reduce((n, g) => n + g.count, 0);
    lines.push(`  and ${rest} more actor(s) in ${sorted.length - MAX_GROUPS} more group(s)`);
  }
  lines.push(cyclesLine(m, edges));
  return lines;
}

/** The strongly connected parts (more than one PE, or a PE waiting on itself) of the PE wait-for graph, in one line. */
function cyclesLine(m: Machine, edges: Map<number, number[]>): string {
  const cycles = stronglyConnected(edges).filter((c) => c.length > 1 || (edges.get(c[0]) ?? []).includes(c[0]));
  if (cycles.length === 0) return 'the PEs\' waits for IPCQ data form no cycle';
  const named = cycles.slice(0, MAX_CYCLES).map((c) => {
    const inCycle = new Set(c);
    // Walk from the lowest PE along edges inside the part: a ring reads in its order.
    const start = Math.min(...c);
    const path = [start];
    let at = start;
    const seen = new Set([start]);
    while (path.length < CYCLE_NAMES) {
      const next = (edges.get(at) ?? []).find((p) => inCycle.has(p) && !seen.has(p));
      if (next === undefined) break;
      path.push(next);
      seen.add(next);
      at = next;
    }
    const names = path.map((p) => m.describePe(p)).join(' waits for ');
    return `${c.length} PE${c.length === 1 ? '' : 's'} (${names}${c.length > path.length ? ' waits for ...' : ''})`;
  });
  const more = cycles.length > MAX_CYCLES ? `, and ${cycles.length - MAX_CYCLES} more` : '';
  return `the PEs' waits for IPCQ data form ${cycles.length === 1 ? 'one cycle' : `${cycles.length} cycles`}: ${named.join('; ')}${more}`;
}

/** Tarjan's strongly connected components, iterative (a ring of thousands of PEs must not overflow the stack); each part's PEs ascending, parts by lowest PE. */
export function stronglyConnected(edges: Map<number, number[]>): number[][] {
  const index = new Map<number, number>();
  const low = new Map<number, number>();
  const onStack = new Set<number>();
  const stack: number[] = [];
  const parts: number[][] = [];
  let next = 0;
  const nodes = [...edges.keys()].sort((x, y) => x - y);
  for (const root of nodes) {
    if (index.has(root)) continue;
    const frames: { v: number; i: number }[] = [{ v: root, i: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (frames.length > 0) {
      const f = frames[frames.length - 1];
      const out = edges.get(f.v) ?? [];
      if (f.i < out.length) {
        const w = out[f.i++];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          frames.push({ v: w, i: 0 });
        } else if (onStack.has(w)) low.set(f.v, Math.min(low.get(f.v) as number, index.get(w) as number));
        continue;
      }
      frames.pop();
      if (frames.length > 0) {
        const parent = frames[frames.length - 1].v;
        low.set(parent, Math.min(low.get(parent) as number, low.get(f.v) as number));
      }
      if (low.get(f.v) === index.get(f.v)) {
        const part: number[] = [];
        let w: number;
        do {
          w = stack.pop() as number;
          onStack.delete(w);
          part.push(w);
        } while (w !== f.v);
        parts.push(part.sort((x, y) => x - y));
      }
    }
  }
  return parts.sort((x, y) => x[0] - y[0]);
}

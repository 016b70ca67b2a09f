// Runs on: executor threads (a piece's check, the release of held pieces) and the
// coordinator thread (its release pass). Owns: how soon a flow that has not
// claimed yet could join a given link, per link, from the launch horizon and the
// floors of the PEs near the link
// (docs/decisions/0170-a-piece-is-alone-by-the-reach-of-its-links.md).
//
// A flow joins its links at its start plus its route's latency (lib/topology/link-share.ts
// joinOf). Routes between SIPs are sip_sip links only, between cubes of one SIP
// cube_cube links only, inside a cube one pe_pe link (lib/topology/links.ts). So a flow
// crossing link L = (v -> w) of class latency a either starts at node v (its PE is one
// of L's near PEs), or reaches v over one link of L's class from an in-neighbour u of v
// (its PE one of L's second-ring PEs), or over two or more. It joins L no earlier than:
//
//   a near PE x            start_x + a
//   a second-ring PE x     start_x + 2a
//   any other PE           H + 3a
//
// where H is the launch horizon (./link-claims.ts: no kernel that has not claimed starts
// before it) and start_x >= max(H, floor(x)) while x has an active kernel: a kernel ends
// no earlier than its clock and its sends' arrivals alone (decision 0023's end rule), and
// what runs next on x starts after it. A piece's own PE is near its first link, and its
// floor already holds the piece's own arrival. So in a collective in lock step a piece
// waits only for its link's neighbours, not for the slowest rank of the machine.
//
//   link class   near PEs                               second ring
//   sip_sip      the PEs of the SIP it leaves (none     the PEs of the SIPs with a link
//                when it leaves a switch)               into that node
//   cube_cube    the PEs of the cube it leaves          the PEs of its neighbour cubes
//   pe_pe        the PE it leaves                       none (a cube is a crossbar)
import type { SharedState } from '../shm/shared-state.js';
import { latencyPs } from '../time/virtual-time.js';
import type { LinkEnds, Links } from '../topology/links.js';
import type { Machine } from '../topology/machine.js';
import { peFloor } from './pe-floor.js';
import { cycleOf, type CycleFloors } from './cycle-floors.js';
import { appendRuns, RangeFloors } from './range-floors.js';

/**
 * One link class's nodes: the nodes with a link into each (node v's are
 * intoList[intoStart[v]] to intoList[intoStart[v + 1] - 1]), and a node's PEs.
 */
interface ClassGraph {
  readonly intoStart: Int32Array;
  readonly intoList: Int32Array;
  /** Whether the class's PEs come from its nodes (false: pe_pe, a crossbar). */
  readonly hasPes: boolean;
  /** A node's PEs are [node * pesPer, (node + 1) * pesPer) for nodes below pesAt (null: every node). */
  readonly pesPer: number;
  readonly pesAt: number | null;
  /** Scratch of a walk over the class's nodes: a stamp per node and a queue. */
  readonly walk: { stamp: number; seen: Int32Array; queue: Int32Array };
  /** When the class graph is a ring: its nodes' floors as a range minimum, which every link of it reads instead of bands (decision 0257). */
  readonly cycle: CycleFloors | null;
  /** Nodes with PEs: 0 .. nodesWithPes - 1. */
  readonly nodesWithPes: number;
  /** Their floors as range minima, for links whose levels are a few runs (decision 0258); made when first read. */
  floors: RangeFloors | null;
}

/** Levels below this are kept per link as a list of nodes (bands 0 to 3): most reads are of them. */
const NEAR_LEVELS = 16;
/** At most this many nodes kept per link (a wider neighbourhood is walked each read, as deeper bands are). */
const NEAR_NODES = 32;
/** A link whose whole class graph behind it has at most this many nodes keeps them all: every band is read from the list (decision 0230). */
const ALL_NODES = 64;

/**
 * One link (v -> w): its latency, and per band b of levels [2^b, 2^(b+1)) the lowest
 * `start + level * latency` of the band's PEs when last read: floors only rise (a kernel
 * ends no earlier than its floor, and what runs next on its PE starts after), so a value
 * read once stays a lower bound, and a band is read again only when a piece needs more
 * of it. Level 1 is v's PEs; level k the PEs of the nodes k - 1 links back from v (a
 * route is a simple path: never through w before the link).
 *
 * The nodes of the levels below NEAR_LEVELS are found once, by the first read, and kept
 * (when there are at most NEAR_NODES of them): a band of them is read from that list, not
 * by a walk of the class graph from v (decision 0216). The graph does not change, so the
 * list is what every walk would find. When every level behind v has at most ALL_NODES
 * nodes in all (a ring of up to 65 SIPs: a link's whole ring), they are all kept, and no
 * band is walked again (decision 0230).
 */
class LinkBands {
  readonly bands: Float64Array;
  /** The deepest level with nodes, once a walk has found the end (Infinity until then). */
  lastLevel: number;
  /** The one PE of level 1 when it has one, else -1. */
  readonly soleNearPe: number;
  /** On a ring (graph.cycle): whether the link goes to from + 1 (else to from - 1). */
  readonly down: boolean;
  /** Its levels as runs of nodes with PEs (./range-floors.ts; undefined: not found yet; null: more than MAX_RUNS, or a ring's or a crossbar's). */
  private runs: Int32Array | null | undefined;
  /** The nodes of levels 1 to NEAR_LEVELS - 1 in level order (undefined: not found yet; null: more than NEAR_NODES). */
  private near: Int32Array | null | undefined;
  /** nearEnd[k]: where level k's nodes end in `near` (level 1 starts at 0). */
  private nearEnd: Int32Array | undefined;
  /** `near` holds every level, to lastLevel. */
  private nearAll = false;
  constructor(
    readonly latencyPs: number,
    readonly graph: ClassGraph,
    readonly from: number,
    readonly to: number,
    bandCount: number,
  ) {
    this.bands = new Float64Array(bandCount).fill(-Infinity);
    // A cube is a crossbar: only the PE a pe_pe link leaves starts a route over it.
    this.lastLevel = graph.hasPes ? Infinity : 1;
    this.soleNearPe = !graph.hasPes ? from : graph.pesPer === 1 && (graph.pesAt === null || from < graph.pesAt) ? from : -1;
    this.down = graph.cycle !== null && to === (from + 1) % graph.cycle.n;
    this.runs = graph.cycle !== null || !graph.hasPes ? null : undefined;
  }

  /** Whether its levels are read as runs (runsClear), found by a walk back from it the first time. */
  hasRuns(): boolean {
    if (this.runs === undefined) this.runs = this.findRuns();
    return this.runs !== null;
  }

  /**
   * Read as runs: the lowest bound of levels `lo` and further that this check proves,
   * when every one is at least `endPs`; else -Infinity. Levels from the first the
   * horizon answers are bounded by it; each run below is a range minimum.
   */
  runsClear(sh: SharedState, lo: number, endPs: number, h: number): number {
    const runs = this.runs as Int32Array;
    const g = this.graph;
    const floors = g.floors ?? (g.floors = new RangeFloors(g.nodesWithPes, g.pesPer));
    const lat = this.latencyPs;
    let clear = Infinity;
    for (let i = 0; i < runs.length; i += 3) {
      const k = runs[i];
      if (k < lo) continue;
      if (h + k * lat >= endPs) return Math.min(clear, h + k * lat); // this level and every later one: the horizon answers
      const need = endPs - k * lat;
      const v = floors.lowest(sh, runs[i + 1], runs[i + 2], need);
      if (v < need) return -Infinity;
      clear = Math.min(clear, v + k * lat);
    }
    return clear;
  }

  /** Walk back from the link over every level, keeping its nodes with PEs as runs: null past MAX_RUNS. */
  private findRuns(): Int32Array | null {
    const g = this.graph;
    const w = g.walk;
    const stamp = this.startWalk();
    const runs: number[] = [];
    let head = 0;
    let tail = 1;
    for (let level = 1; head < tail; level++) {
      const end = tail;
      const nodes: number[] = [];
      for (let i = head; i < end; i++) {
        const v = w.queue[i];
        if (g.pesAt === null || v < g.pesAt) nodes.push(v);
        tail = pushInto(g, v, stamp, tail);
      }
      if (!appendRuns(runs, level, nodes)) return null;
      head = end;
    }
    return Int32Array.from(runs);
  }

  /**
   * On a ring: the lowest bound of levels `lo` and further that this check proves, when
   * every one is at least `endPs`; else -Infinity. Levels below the first the horizon
   * answers (h + level * latency >= endPs) are read from the ring's range minimum; that
   * level from its floors as well as the horizon, and those past it by the horizon.
   */
  cycleClear(sh: SharedState, lo: number, endPs: number, h: number): number {
    const cycle = this.graph.cycle as CycleFloors;
    const n = cycle.n;
    const lat = this.latencyPs;
    // The first level the horizon answers, or n (past the last level, n - 1).
    let k = n;
    if (h > -Infinity) {
      k = Math.max(lo, Math.ceil((endPs - h) / lat));
      if (h + k * lat < endPs) k++;
      k = Math.min(k, n);
    }
    const read = cycle.bound(sh, this.from, this.down, lo, k, endPs);
    if (read < endPs) return -Infinity;
    if (k >= n) return read;
    // Level k, the first the horizon answers, read from its floors too: the bound proved then
    // reaches up to a latency further, past the next piece's end on a ring moving in step,
    // which the bound kept for the link (clearFrom2) then answers (decision 0277).
    const atK = Math.max(cycle.levelNow(sh, this.from, this.down, k), h + k * lat);
    return Math.min(read, atK, k + 1 < n ? h + (k + 1) * lat : Infinity);
  }

  /** Read band b again: the lowest max(floor, h) + level * latency of its PEs (Infinity: none). */
  read(sh: SharedState, b: number, h: number): number {
    const lo = 1 << b;
    const hi = lo << 1;
    let best = Infinity;
    const g = this.graph;
    const pesPer = g.pesPer;
    if (!g.hasPes) {
      if (b === 0) best = this.lowest(sh, this.from, this.from + 1, 1, h, best);
    } else {
      if (this.near === undefined) this.findNear();
      const near = this.near ?? null;
      if (near !== null && (hi <= NEAR_LEVELS || this.nearAll)) {
        const end = this.nearEnd as Int32Array;
        for (let level = lo; level < hi && level <= this.lastLevel; level++) {
          for (let i = end[level - 1]; i < end[level]; i++) {
            const v = near[i];
            if (g.pesAt === null || v < g.pesAt) best = this.lowest(sh, v * pesPer, (v + 1) * pesPer, level, h, best);
          }
        }
      } else best = this.walk(sh, lo, hi, h, best);
    }
    if (best > this.bands[b]) this.bands[b] = best;
    return this.bands[b];
  }

  /** Start a walk over the class's scratch queue from this link's source (its two ends seen): the walk's stamp. */
  private startWalk(): number {
    const w = this.graph.walk;
    const stamp = ++w.stamp;
    w.seen[this.from] = stamp;
    w.seen[this.to] = stamp;
    w.queue[0] = this.from;
    return stamp;
  }

  /** A breadth-first walk back from v to level hi - 1, over the class's scratch queue: the lowest bound of levels [lo, hi). */
  private walk(sh: SharedState, lo: number, hi: number, h: number, best: number): number {
    const g = this.graph;
    const pesPer = g.pesPer;
    const w = g.walk;
    const stamp = this.startWalk();
    let head = 0;
    let tail = 1;
    for (let level = 1; level < hi && head < tail; level++) {
      const end = tail;
      for (let i = head; i < end; i++) {
        const v = w.queue[i];
        if (level >= lo && (g.pesAt === null || v < g.pesAt)) best = this.lowest(sh, v * pesPer, (v + 1) * pesPer, level, h, best);
        tail = pushInto(g, v, stamp, tail);
      }
      head = end;
      if (head === tail) this.lastLevel = Math.min(this.lastLevel, level);
    }
    return best;
  }

  /** Find and keep the nodes of every level when they are few (findAll), else of levels 1 to NEAR_LEVELS - 1 (the walk's, in its order), or mark them too many. */
  private findNear(): void {
    if (this.findAll()) return;
    const g = this.graph;
    const w = g.walk;
    const stamp = this.startWalk();
    const nearEnd = new Int32Array(NEAR_LEVELS);
    let head = 0;
    let tail = 1;
    for (let level = 1; level < NEAR_LEVELS; level++) {
      const end = tail;
      for (let i = head; i < end; i++) {
        tail = pushInto(g, w.queue[i], stamp, tail);
      }
      nearEnd[level] = end;
      if (end > NEAR_NODES) {
        this.near = null;
        return;
      }
      head = end;
      if (head === tail) {
        this.lastLevel = Math.min(this.lastLevel, level);
        for (let k = level + 1; k < NEAR_LEVELS; k++) nearEnd[k] = end;
        break;
      }
    }
    this.near = w.queue.slice(0, nearEnd[NEAR_LEVELS - 1]);
    this.nearEnd = nearEnd;
  }

  /** Keep the nodes of every level, in the walk's order, if there are at most ALL_NODES of them: true if kept. */
  private findAll(): boolean {
    const g = this.graph;
    const w = g.walk;
    const stamp = this.startWalk();
    const ends = [0];
    let head = 0;
    let tail = 1;
    for (let level = 1; tail <= ALL_NODES; level++) {
      const end = tail;
      for (let i = head; i < end; i++) {
        tail = pushInto(g, w.queue[i], stamp, tail);
      }
      ends.push(end);
      head = end;
      if (head === tail) {
        this.lastLevel = Math.min(this.lastLevel, level);
        this.near = w.queue.slice(0, tail);
        this.nearEnd = Int32Array.from(ends);
        this.nearAll = true;
        return true;
      }
    }
    return false;
  }

  /** The lowest of `best` and max(floor, h) + level * latency over PEs [x0, x1) (a method, not a closure: read runs on the send path). */
  private lowest(sh: SharedState, x0: number, x1: number, level: number, h: number, best: number): number {
    const at = level * this.latencyPs;
    for (let x = x0; x < x1; x++) best = Math.min(best, Math.max(peFloor(sh, x), h) + at);
    return best;
  }
}

/** Queue the unseen nodes with a link into `v` at `tail` of g's walk, stamped: the new tail. */
function pushInto(g: ClassGraph, v: number, stamp: number, tail: number): number {
  const w = g.walk;
  for (let i = g.intoStart[v], e = g.intoStart[v + 1]; i < e; i++) {
    const u = g.intoList[i];
    if (w.seen[u] !== stamp) (w.seen[u] = stamp), (w.queue[tail++] = u);
  }
  return tail;
}

/**
 * Per thread and machine: the bands of the links this thread's checks ask about, each
 * made when first asked for. Under --threads rank a thread asks about its own rank's few
 * links, and a LinkBands for every link of the machine in every thread was p^2 in all
 * (decision 0243). The class graphs behind the walks are two arrays of ints a class.
 */
export class LinkReach {
  /** By link id: its bands once asked for (undefined: not yet; null: the id names no link). */
  private readonly links: (LinkBands | null | undefined)[];
  /**
   * By link id, for a link whose level 1 is one PE (LinkBands.soleNearPe): no flow not
   * claimed yet from level 2 or further joins it before this (-Infinity until a check of
   * that PE's piece read every band it needed). A lower bound kept from that check:
   * floors and the horizon only rise. Only that PE's routes start on the link, and its
   * own floor needs no reading, so a piece of it whose end is no later is proved without
   * touching the link's bands (decision 0251).
   */
  readonly clearFrom2: Float64Array;
  private readonly graphs: Record<LinkEnds['cls'], ClassGraph>;
  private readonly latency: Record<LinkEnds['cls'], number>;
  private readonly bandCount: number;
  /** Every class graph with links is a ring (or has at most two nodes): along it, a rank d links back from a link is d ranks back. */
  readonly ringsOnly: boolean;
  /** How many links' bands this thread has made (each when first asked for). */
  bandsMade = 0;
  constructor(
    m: Machine,
    private readonly machineLinks: Links,
  ) {
    const cls = m.topology.timing.links;
    this.latency = { sip_sip: latencyPs(cls.sip_sip.latency_ns), cube_cube: latencyPs(cls.cube_cube.latency_ns), pe_pe: latencyPs(cls.pe_pe.latency_ns) };
    // Two passes over the links: count each node's in-links, then place them (no list a node).
    const edges = (each: (c: 'sip_sip' | 'cube_cube', from: number, to: number) => void): void => {
      for (let id = 0; id < machineLinks.count; id++) {
        const e = machineLinks.ends(id);
        if (e.to >= 0 && e.cls !== 'pe_pe') each(e.cls, e.from, e.to); // else names no link; or a crossbar's
      }
    };
    // Nodes of a class: SIPs and switches (lib/topology/fabric.ts), or cubes.
    const nodes = { sip_sip: m.sips + m.fabric.switches, cube_cube: m.sips * m.cubesPerSip };
    const into = { sip_sip: new Int32Array(nodes.sip_sip + 1), cube_cube: new Int32Array(nodes.cube_cube + 1) };
    edges((c, _from, to) => into[c][to + 1]++);
    for (const c of ['sip_sip', 'cube_cube'] as const) for (let v = 0; v < nodes[c]; v++) into[c][v + 1] += into[c][v];
    const list = { sip_sip: new Int32Array(into.sip_sip[nodes.sip_sip]), cube_cube: new Int32Array(into.cube_cube[nodes.cube_cube]) };
    const fill = { sip_sip: into.sip_sip.slice(0, nodes.sip_sip), cube_cube: into.cube_cube.slice(0, nodes.cube_cube) };
    edges((c, from, to) => (list[c][fill[c][to]++] = from));
    const walkOf = (n: number) => ({ stamp: 0, seen: new Int32Array(n), queue: new Int32Array(n) });
    this.graphs = {
      sip_sip: { intoStart: into.sip_sip, intoList: list.sip_sip, hasPes: true, pesPer: m.pesPerSip, pesAt: m.sips, walk: walkOf(nodes.sip_sip), cycle: cycleOf(into.sip_sip, list.sip_sip, nodes.sip_sip, nodes.sip_sip === m.sips, m.pesPerSip, this.latency.sip_sip), nodesWithPes: m.sips, floors: null },
      cube_cube: { intoStart: into.cube_cube, intoList: list.cube_cube, hasPes: true, pesPer: m.pesPerCube, pesAt: null, walk: walkOf(nodes.cube_cube), cycle: cycleOf(into.cube_cube, list.cube_cube, nodes.cube_cube, true, m.pesPerCube, this.latency.cube_cube), nodesWithPes: nodes.cube_cube, floors: null },
      pe_pe: { intoStart: new Int32Array(1), intoList: new Int32Array(0), hasPes: false, pesPer: 1, pesAt: null, walk: walkOf(0), cycle: null, nodesWithPes: 0, floors: null },
    };
    this.ringsOnly = (['sip_sip', 'cube_cube'] as const).every((c) => nodes[c] <= 2 || into[c][nodes[c]] === 0 || this.graphs[c].cycle !== null);
    // Bands up to a level past any simple path's length (the nodes of the largest class).
    this.bandCount = 2 + Math.ceil(Math.log2(Math.max(2, m.totalPes + m.sips)));
    this.links = new Array<LinkBands | null | undefined>(machineLinks.count).fill(undefined);
    this.clearFrom2 = new Float64Array(machineLinks.count).fill(-Infinity);
  }
  bandsOf(link: number): LinkBands {
    const b = this.links[link];
    return b === undefined ? this.make(link) : b!;
  }
  private make(link: number): LinkBands {
    const e = this.machineLinks.ends(link);
    const b = e.to < 0 ? null : new LinkBands(this.latency[e.cls], this.graphs[e.cls], e.from, e.to, this.bandCount);
    this.links[link] = b;
    if (b !== null) this.bandsMade++;
    return b!;
  }
  /** The smallest latency of `route`'s links: a flow crossing one of them joins it no sooner after it starts. */
  minLatencyPs(route: readonly number[]): number {
    let m = Infinity;
    for (let i = 0; i < route.length; i++) m = Math.min(m, this.bandsOf(route[i]).latencyPs);
    return m;
  }
}

const reachOf = new WeakMap<Machine, LinkReach>();

/** The machine's per-link reach (per thread and machine; bands are read as checks need them). */
export function linkReach(m: Machine, links: Links): LinkReach {
  let r = reachOf.get(m);
  if (!r) reachOf.set(m, (r = new LinkReach(m, links)));
  return r;
}

/**
 * Can no flow that has not claimed yet join any link of `route` before `endPs`, given
 * the horizon `h`? Band by band out from each link, until the horizon alone answers for
 * every later level (h + level * latency >= endPs) or no level is left. The piece's own
 * PE `pe` needs no reading: its floor already holds the piece's arrival (endPs).
 */
export function unreachedBefore(sh: SharedState, r: LinkReach, route: readonly number[], pe: number, endPs: number, h: number): boolean {
  for (let i = 0; i < route.length; i++) {
    const l = route[i];
    // A route's first link leaves the piece's own node: when that node's one PE is the piece's, a bound kept from its last check may answer.
    if (i === 0 && r.clearFrom2[l] >= endPs) continue;
    const lb = r.bandsOf(l);
    const lat = lb.latencyPs;
    // Level 1 is the PEs of the node the link leaves: when that is the piece's PE alone, its floor passes.
    const fromPe = i === 0 && lb.soleNearPe === pe;
    // The lowest bound this check proves for levels 2 and further (clearFrom2).
    let clear = Infinity;
    if (lb.graph.cycle !== null) {
      clear = lb.cycleClear(sh, fromPe ? 2 : 1, endPs, h);
      if (clear < endPs) return false;
    } else if (lb.hasRuns()) {
      clear = lb.runsClear(sh, fromPe ? 2 : 1, endPs, h);
      if (clear < endPs) return false;
    } else for (let b = fromPe ? 1 : 0; b < lb.bands.length; b++) {
      const lo = 1 << b;
      if (lo > lb.lastLevel) break; // no level is left
      if (h + lo * lat >= endPs) {
        // This band and every later one start late enough: the horizon answers for them.
        clear = Math.min(clear, h + lo * lat);
        break;
      }
      const band = lb.bands[b] >= endPs ? lb.bands[b] : lb.read(sh, b, h);
      if (band < endPs) return false;
      clear = Math.min(clear, band);
    }
    if (fromPe && clear > r.clearFrom2[l]) r.clearFrom2[l] = clear;
  }
  return true;
}

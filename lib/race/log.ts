// Runs on: every actor thread (main, executors). Owns: this thread's record of
// what the race checker (--check-races) needs, kept in program order per actor:
// memory accesses, and the releases and acquires of every happens-before edge
// (IPCQ pieces, launches, kernel ends, barriers, spawn and join). Nothing
// crosses threads while the run goes on: each thread hands its record to main
// at session end (the executor's report), and ./check.ts rebuilds the vector
// clocks there (docs/decisions/0021-race-detection-after-the-run.md).
//
// Off by default: every hook is `if (raceLog.on)`, one branch, and the record
// stays empty (docs/benchmarks.md, "The race checker's cost").

/** One event of an actor, in its program order. Keys name the edge: a release of key K happens before every acquire of K. */
export type RaceEvent =
  | { k: 'rel'; keys: string[] }
  | { k: 'acq'; keys: string[] }
  | {
      k: 'acc';
      write: boolean;
      /** The memory-space instance: `sip.cube.hbm`, `sip.cube.sram` or `sip.cube.tcm.pe`. */
      region: string;
      /** Device byte range [lo, hi) in that instance. */
      lo: number;
      hi: number;
      atPs: number;
      tensor: string;
      /** Where the shard is, and the element range inside it (for the report). */
      shard: string;
      elements: [number, number];
    };

/** Who an actor is, for the report and for a deterministic choice among races: set by whoever knows (a host names the kernels it launches). */
export interface ActorMeta {
  label: string;
  /** Compared lexicographically; the same in every run of the program (no launch sequence number, no thread). */
  order: number[];
}

/** A thread's whole record, as it crosses to main (structured-clone safe). */
export interface RaceLogData {
  events: [string, RaceEvent[]][];
  meta: [string, ActorMeta][];
  /** [from, to]: releases of key `from` also count as releases of key `to` (a PE runs one host's launches in order). */
  links: [string, string][];
}

/** Where an access lands: the fields of a shard the log needs (lib/shm/tensor-desc.ts ShardDesc). */
export interface AccessedShard {
  sip: number;
  cube: number;
  pe: number;
  space: string;
  deviceOffset: number;
  nbytes: number;
}

export const MAIN_ACTOR = 'H:main';

class RaceLog {
  /** Checking mode for the session this thread serves. */
  on = false;
  private events = new Map<string, RaceEvent[]>();
  private meta = new Map<string, ActorMeta>();
  private links: [string, string][] = [];
  /** The kernel actor now running on each PE of this thread. */
  private running = new Map<number, string>();
  /** Pieces issued per ring: sends (on the sender's thread) and receives (on the receiver's). */
  private sent = new Map<number, number>();
  private received = new Map<number, number>();
  /** Times each rank was spawned (main counts spawns; the rank's thread counts starts: they match). */
  private spawns = new Map<number, number>();

  /** Start a session's record (an executor's session, or main's epoch). */
  reset(on: boolean): void {
    this.on = on;
    this.events = new Map();
    this.meta = new Map();
    this.links = [];
    this.running = new Map();
    this.sent = new Map();
    this.received = new Map();
    this.spawns = new Map();
    this.meta.set(MAIN_ACTOR, { label: 'the main host', order: [0] });
  }

  private push(actor: string, e: RaceEvent): void {
    let list = this.events.get(actor);
    if (!list) this.events.set(actor, (list = []));
    list.push(e);
  }

  release(actor: string, keys: string[]): void {
    this.push(actor, { k: 'rel', keys });
  }

  acquire(actor: string, keys: string[]): void {
    this.push(actor, { k: 'acq', keys });
  }

  name(actor: string, meta: ActorMeta): void {
    this.meta.set(actor, meta);
  }

  /** What this thread knows of `actor` (its hosts are named when they start). */
  metaOf(actor: string): ActorMeta {
    return this.meta.get(actor) ?? { label: actor, order: [Number.MAX_SAFE_INTEGER] };
  }

  link(from: string, to: string): void {
    this.links.push([from, to]);
  }

  /** An access by `actor` to elements [first, first + count) of shard `s` of tensor `tensor`. */
  access(actor: string, write: boolean, tensor: string, s: AccessedShard, bpe: number, first: number, count: number, atPs: number): void {
    if (count <= 0) return;
    const region = s.space === 'tcm' ? `${s.sip}.${s.cube}.tcm.${s.pe}` : `${s.sip}.${s.cube}.${s.space}`;
    const lo = s.deviceOffset + first * bpe;
    this.push(actor, { k: 'acc', write, region, lo, hi: lo + count * bpe, atPs, tensor, shard: `(sip ${s.sip}, cube ${s.cube}, pe ${s.pe}) ${s.space}`, elements: [first, first + count] });
  }

  // ---- kernels --------------------------------------------------------------

  static kernelActor(pe: number, seq: number): string {
    return `K:${pe}:${seq}`;
  }

  kernelStart(pe: number, seq: number): void {
    const a = RaceLog.kernelActor(pe, seq);
    this.running.set(pe, a);
    this.acquire(a, [`L:${pe}:${seq}`]);
  }

  kernelEnd(pe: number, seq: number): void {
    this.release(RaceLog.kernelActor(pe, seq), [`E:${pe}:${seq}`]);
    this.running.delete(pe);
  }

  /** The kernel running on `pe` (this thread runs it). */
  kernelOn(pe: number): string {
    return this.running.get(pe) ?? `K:${pe}:?`;
  }

  /** A send of `pieces` pieces on `ring` by the kernel on `pe`: releases them. */
  send(pe: number, ring: number, pieces: number): void {
    const first = this.sent.get(ring) ?? 0;
    this.sent.set(ring, first + pieces);
    this.release(this.kernelOn(pe), pieceKeys(ring, first, pieces));
  }

  /** A receive of `pieces` pieces from `ring`: the keys to acquire once it completes. */
  receive(ring: number, pieces: number): string[] {
    const first = this.received.get(ring) ?? 0;
    this.received.set(ring, first + pieces);
    return pieceKeys(ring, first, pieces);
  }

  // ---- spawn ----------------------------------------------------------------

  /** The actor of rank `rank`'s host code, spawned for the n-th time (main and the rank's thread count alike). */
  spawnRank(rank: number): string {
    const n = this.spawns.get(rank) ?? 0;
    this.spawns.set(rank, n + 1);
    const actor = `H:${rank}:${n}`;
    this.meta.set(actor, { label: n === 0 ? `rank ${rank}'s host` : `rank ${rank}'s host (spawn ${n + 1})`, order: [1, n, rank] });
    return actor;
  }

  take(): RaceLogData {
    return { events: [...this.events], meta: [...this.meta], links: this.links };
  }
}

function pieceKeys(ring: number, first: number, n: number): string[] {
  const keys: string[] = [];
  for (let k = first; k < first + n; k++) keys.push(`P:${ring}:${k}`);
  return keys;
}

export const kernelActor = RaceLog.kernelActor;

/** This thread's record (one per thread: module state is per thread). */
export const raceLog = new RaceLog();

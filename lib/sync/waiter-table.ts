// Runs on: every thread that hosts actors (executors and main), inside its
// Scheduler (./scheduler.ts). Owns: that thread's table of parked waiters —
// each waits for `ctl[word] >= target` — keyed by word, with a count of the
// waiters in it and a filter that lets a publish with no waiter on its word
// skip the table. It decides which waiters a word's value releases and in what
// order they are settled and resolved; when to look (a publish, the wake loop,
// an abort) is the scheduler's. Also the broadcast waiter (the host barrier's),
// which settles through its scheduler's BroadcastHost.

/**
 * A parked wait: resolved once ctl[word] >= target, rejected on abort or stop.
 * resolve and reject may run synchronously inside a publish (wake) and may
 * publish and park again themselves: wake settles a word's list before it
 * calls them.
 */
export interface Waiter {
  word: number;
  target: number;
  resolve: () => void;
  reject: (e: Error) => void;
  /** A broadcast waiter (Scheduler.waitBroadcast): it also has an Atomics.waitAsync parked on `word`. */
  broadcast: boolean;
  /** Resolved or rejected (by a sweep, by rejectAll, or by its own waitAsync). */
  settled: boolean;
}

/** Slots of a table's filter (a power of two; 32 KiB of counts per thread). */
const FILTER_SLOTS = 1 << 13;
const FILTER_MASK = FILTER_SLOTS - 1;

export class WaiterTable {
  private readonly byWord = new Map<number, Waiter[]>();
  /** Waiters in the table. */
  private n = 0;
  /**
   * Waiters parked per word, counted modulo FILTER_SLOTS: a zero means no waiter
   * on any word of that slot, so wake (every local publish) skips the map.
   * While a thread's hosts wait for their collectives the count is never zero,
   * and the map lookup was most of a publish's cost (a ring step publishes twice).
   */
  private readonly filter = new Uint32Array(FILTER_SLOTS);

  constructor(private readonly ctl: Int32Array) {}

  /** Waiters in the table. */
  get count(): number {
    return this.n;
  }

  /** Add a waiter under its word. */
  add(w: Waiter): void {
    const list = this.byWord.get(w.word);
    if (list) list.push(w);
    else this.byWord.set(w.word, [w]);
    this.n++;
    this.filter[w.word & FILTER_MASK]++;
  }

  /**
   * Take out a broadcast waiter its own waitAsync settled. Its list stays in the
   * map when it empties: the next barrier's waiter reuses it (no Map entry made
   * and deleted per barrier).
   */
  remove(w: Waiter): void {
    const list = this.byWord.get(w.word)!;
    if (list.length === 1) list.length = 0;
    else list.splice(list.indexOf(w), 1);
    this.n--;
    this.filter[w.word & FILTER_MASK]--;
  }

  /** Resolve the waiters on `word` whose target its value has reached. */
  wake(word: number): void {
    if (this.filter[word & FILTER_MASK] === 0) return;
    const list = this.byWord.get(word);
    if (!list) return;
    if (list.length === 1) {
      // One waiter (a parked receive, a held piece): out of the table, then resolved, with no list of the released.
      const w = list[0];
      if (Atomics.load(this.ctl, word) < w.target) return;
      this.n--;
      this.filter[word & FILTER_MASK]--;
      w.settled = true;
      this.byWord.delete(word);
      w.resolve();
      return;
    }
    // Settle the list first, then resolve: a resolve may publish (and so sweep
    // every word, this one too) or park again, synchronously (parkWaiter).
    const released = this.release(word, list, undefined);
    if (released !== undefined) for (const w of released) w.resolve();
  }

  /**
   * Resolve every waiter whose word has reached its target (a sweep: another thread
   * rang). All are settled and taken out first, then resolved: a resolve may publish,
   * park again or sweep, and finds the table consistent. One pass over the map: a
   * thread's hosts stay parked through their collectives, and a thread beside others
   * sweeps at every ring, where a copy of the words, a map lookup a word and a length
   * set a word (a runtime call) cost more than the look at each waiter (decision 0264).
   */
  wakeAll(): void {
    this.sweeping = undefined;
    // forEach with a callback made once: a for-of over the map's entries made an entry array a word, every sweep.
    this.byWord.forEach(this.releaseEntry);
    const released = this.sweeping as Waiter[] | undefined;
    this.sweeping = undefined;
    if (released !== undefined) for (const w of released) w.resolve();
  }

  /** The waiters a sweep (wakeAll) has taken out so far. */
  private sweeping: Waiter[] | undefined;
  private readonly releaseEntry = (list: Waiter[], word: number): void => {
    this.sweeping = this.release(word, list, this.sweeping);
  };

  /**
   * Take the waiters of `word` (its `list`) that its value has reached out of the
   * table, settled, onto `released` (made when the first is); returns it. A list none
   * of whose waiters is released is left as it is.
   */
  private release(word: number, list: Waiter[], released: Waiter[] | undefined): Waiter[] | undefined {
    const v = Atomics.load(this.ctl, word);
    let kept = 0;
    for (let i = 0; i < list.length; i++) {
      const w = list[i];
      if (v >= w.target) {
        this.n--;
        this.filter[word & FILTER_MASK]--;
        w.settled = true;
        (released ??= []).push(w);
      } else list[kept++] = w;
    }
    if (kept === list.length) return released;
    if (kept === 0) this.byWord.delete(word);
    else list.length = kept;
    return released;
  }

  /**
   * Reject every waiter with `e`; returns the words broadcast waiters were
   * parked on. The table is emptied first: a reject runs the waiter's own code
   * (parkWaiter), which must find it consistent.
   */
  rejectAll(e: Error): Set<number> {
    const all: Waiter[] = [];
    for (const list of this.byWord.values()) for (const w of list) all.push(w);
    this.byWord.clear();
    this.n = 0;
    this.filter.fill(0);
    const watched = new Set<number>();
    for (const w of all) {
      w.settled = true;
      w.reject(e);
      if (w.broadcast) watched.add(w.word);
    }
    return watched;
  }
}

/** Actor id meaning "do not publish a status" (internal service loops, not program actors). */
export const NO_ACTOR = -1;

/** What a broadcast waiter asks of its thread's scheduler (./scheduler.ts). */
export interface BroadcastHost {
  /** Publish the actor RUNNING again. */
  unblock(actor: number): void;
  /** Re-check the waiter's word, and wait on it again if it is short. */
  watchBroadcast(w: BroadcastWaiter): void;
}

/** Told when its broadcast wait is over, before the wait's promise resolves (the host barrier's leave). */
export interface BroadcastListener {
  /** The word reached the target; `aux` is the wait's aux (the barrier's round). A throw rejects the wait. */
  woke(aux: number): void;
}

/**
 * A broadcast waiter (waitBroadcast): one object per wait, its settling code
 * in methods rather than closures, since a rank makes one per barrier. Settles
 * once (whoever comes first: its own waitAsync, a sweep, rejectAll); publishes
 * the actor RUNNING again as it does.
 */
export class BroadcastWaiter implements Waiter {
  readonly broadcast = true;
  settled = false;
  /** Re-check the word when its waitAsync ends (made once per wait: a wait may park more than once). */
  readonly rewatch = (): void => this.sched.watchBroadcast(this);

  constructor(
    private readonly sched: BroadcastHost,
    private readonly actor: number,
    readonly word: number,
    readonly target: number,
    private readonly aux: number,
    private readonly listener: BroadcastListener | undefined,
    private readonly done: () => void,
    private readonly failed: (e: Error) => void,
  ) {}

  resolve(): void {
    if (this.actor !== NO_ACTOR) this.sched.unblock(this.actor);
    if (this.listener !== undefined) {
      try {
        this.listener.woke(this.aux);
      } catch (e) {
        this.failed(e as Error);
        return;
      }
    }
    this.done();
  }

  reject(e: Error): void {
    if (this.actor !== NO_ACTOR) this.sched.unblock(this.actor);
    this.failed(e);
  }
}

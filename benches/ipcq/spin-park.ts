// Runs on: the ipcq_throughput bench's worker threads, which have nothing else
// to run, so they may block in Atomics.wait (DESIGN §3). Owns: the
// spin-then-park wait on a monotonic ring counter (tail or head) and the
// matching wake.
//
// A waiter spins on Atomics.load for a bounded number of iterations (a spin
// round trip is ~90 ns while each spinner has a core; a park/wake is ~50 µs:
// DESIGN §8), then parks in Atomics.wait on the counter itself. The publisher
// notifies only when the waiter's sleep generation is odd, so the steady state
// costs one Atomics.load per publication and no syscall.
//
// Lost-wakeup argument (waiter W on counter c with sleep generation g, publisher P):
//   W: add(g) -> odd; v = load(c); if v < target: wait(c, v); add(g) -> even
//   P: store(c); if load(g) is odd: notify(c)
// All four are sequentially consistent. If P reads an even g, its store(c)
// precedes W's add(g), hence W's load(c): W sees the new value and does not
// wait. Otherwise P notifies; if W has not reached wait yet, wait finds
// c != v and returns at once.

export class SpinPark {
  /** How many times this thread parked (a diagnostic: 0 means pure spinning). */
  parks = 0;

  constructor(
    private readonly ctl: Int32Array,
    /** This thread's sleep generation word (odd while parked). */
    private readonly sleepGen: number,
    /** Atomics.load iterations before parking. */
    readonly spin: number,
  ) {}

  /** Returns the first value seen of ctl[word] that is >= target. */
  waitAtLeast(word: number, target: number): number {
    const ctl = this.ctl;
    for (;;) {
      for (let i = 0; i < this.spin; i++) {
        const v = Atomics.load(ctl, word);
        if (v >= target) return v;
      }
      Atomics.add(ctl, this.sleepGen, 1);
      const v = Atomics.load(ctl, word);
      if (v < target) {
        this.parks++;
        Atomics.wait(ctl, word, v);
      }
      Atomics.add(ctl, this.sleepGen, 1);
    }
  }
}

/** After storing ctl[word]: wake the peer parked on it, if it is parked. */
export function wakeIfParked(ctl: Int32Array, word: number, peerSleepGen: number): void {
  if ((Atomics.load(ctl, peerSleepGen) & 1) === 1) Atomics.notify(ctl, word);
}

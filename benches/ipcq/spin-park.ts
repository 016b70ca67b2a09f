// Runs on: the ipcq_throughput bench's worker threads, which have nothing else
// to run, so they may block in Atomics.wait (DESIGN §3). Owns: the
// spin-then-park wait on a monotonic ring counter (tail or head).
//
// A waiter spins on Atomics.load for a bounded number of iterations (a spin
// round trip is ~90 ns while each spinner has a core; a park/wake is ~50 µs:
// DESIGN §8), then announces what it waits for in the ring's want word
// (IpcqRingView.wantData / wantCredit) and parks in Atomics.wait on the counter
// itself. The publisher notifies only when its publication reaches that want
// (dataWanted / creditWanted), so the steady state costs one Atomics.load per
// publication and no notify.
//
// Lost-wakeup argument (the ring's Dekker pair; all accesses sequentially consistent):
//   waiter:    store(want = target); v = load(counter); if v < target: wait(counter, v)
//   publisher: store(counter = c);   if before < load(want) <= c: notify(counter)
// If the waiter's load sees v < target, it precedes the publication that reaches
// target, whose load(want) therefore sees target and notifies; if that notify
// comes before the wait starts, wait finds counter != v and returns at once.

export class SpinPark {
  /** How many times this thread parked (a diagnostic: 0 means pure spinning). */
  parks = 0;

  constructor(
    private readonly ctl: Int32Array,
    /** Atomics.load iterations before parking. */
    readonly spin: number,
  ) {}

  /** Wait until ctl[word] >= target; `announce(target)` stores the want before parking. Returns the value seen. */
  waitAtLeast(word: number, target: number, announce: (target: number) => void): number {
    const ctl = this.ctl;
    for (;;) {
      for (let i = 0; i < this.spin; i++) {
        const v = Atomics.load(ctl, word);
        if (v >= target) return v;
      }
      announce(target);
      const v = Atomics.load(ctl, word);
      if (v >= target) return v;
      this.parks++;
      Atomics.wait(ctl, word, v);
    }
  }
}

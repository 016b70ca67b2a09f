// Runs on: any thread of a test that hands words back and forth with a Worker
// (test/arbiter-race.test.ts, test/abort-claim.test.ts and their fixtures).

/**
 * Until `a[i]` reaches `target` or goes negative: spinning a while (the other side is
 * on another core, and a sleep and wake-up per cycle would make cycles rare), then
 * asleep on the word (a busy machine: the other side may need this core).
 */
export function awaitWord(a: Int32Array, i: number, target: number): void {
  for (let spin = 0; spin < 20_000; spin++) {
    const v = Atomics.load(a, i);
    if (v >= target || v < 0) return;
  }
  for (let v; (v = Atomics.load(a, i)) < target && v >= 0; ) Atomics.wait(a, i, v, 1);
}

// Runs on: main thread (tap). The fault-owner hooks on one thread with two owners
// live (lib/sync/fault-owner.ts, decision 0120): which promises carry an owner tag.
import t from 'tap';
import { FaultOwner, ownerOfPromise, resolvedUntagged, thenUntagged } from '../lib/sync/fault-owner.js';

/** The owner tags on a promise: its own symbol property named as fault-owner.ts names it (Node's own hooks may add others). */
const tags = (p: Promise<unknown>): number => Object.getOwnPropertySymbols(p).filter((s) => s.description === 'kernbench.faultOwner').length;

t.test('with two owners live, the engine\'s fulfilled and bookkeeping promises carry no tag, and an owner\'s own promises still do', async (t) => {
  const a = new FaultOwner('owner a', () => 0);
  const b = new FaultOwner('owner b', () => 0);
  let release!: () => void;
  const bDone = new Promise<void>((r) => (release = r));
  const bRun = b.run(() => bDone);
  const seen = await a.run(async () => {
    const own = Promise.resolve(1);
    const fulfilled = resolvedUntagged(2);
    let derived: Promise<unknown> | undefined;
    const spy = Promise.prototype.then;
    // Catch the promise thenUntagged's `then` makes, to look at it.
    Promise.prototype.then = function (this: Promise<unknown>, ...args: Parameters<typeof spy>) {
      const p = spy.apply(this, args);
      derived ??= p;
      return p;
    } as typeof spy;
    try {
      thenUntagged(Promise.resolve(), () => undefined);
    } finally {
      Promise.prototype.then = spy;
    }
    return { own: tags(own), fulfilled: tags(fulfilled), derived: derived === undefined ? -1 : tags(derived), ownOwner: ownerOfPromise(own) };
  });
  release();
  await bRun;
  t.same({ own: seen.own, fulfilled: seen.fulfilled, derived: seen.derived }, { own: 1, fulfilled: 0, derived: 0 });
  t.equal(seen.ownOwner, a, 'a promise the owner made is attributed to it');
});

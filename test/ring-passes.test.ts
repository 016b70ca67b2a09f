// The public ring steps' contract on a user's kernel (decision 0282): a reduce-scatter
// on its own (ringReduceScatter) leaves in every chunk it received the partial sum it
// sent on, and only the chunk a rank never receives (its own position's) unchanged; an
// all-reduce (ringAllReduce), whose reduce-scatter writes back only the chunk it ends up
// owning, still leaves the full sum in every element. Expected values are computed from
// the ring's order, under one thread and one thread a rank.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';
import { RING_PASSES, ringPassRank, startValue } from './fixtures/ring-passes.js';

const rt = new TestRuntime({ modules: [RING_PASSES] });
t.teardown(() => rt.close());

const P = 4;
const N = 16; // four chunks of four elements
const mod = (a: number): number => ((a % P) + P) % P;

/** What rank `pos` holds at element i after a reduce-scatter alone: chunk c, received at step s, is the sum of ranks pos, pos - 1, ..., pos - s - 1. */
function afterReduceScatter(pos: number, i: number): number {
  const c = Math.floor(i / (N / P));
  if (c === pos) return startValue(pos, i);
  const s = mod(pos - 1 - c);
  let sum = 0;
  for (let k = 0; k <= s + 1; k++) sum += startValue(mod(pos - k), i);
  return sum;
}

const fullSum = (i: number): number => Array.from({ length: P }, (_, r) => startValue(r, i)).reduce((a, b) => a + b, 0);

for (const threads of [1, 'rank'] as const) {
  t.test(`--threads ${threads}: a reduce-scatter alone keeps its partial sums; an all-reduce ends with the full sum everywhere`, async (t) => {
    const run = (which: 'reduceScatter' | 'allReduce') =>
      rt.session({ topology: 'ideal', threads, sets: [`system.sips.count=${P}`] }, (torch) => torch.multiprocessing.spawn(ringPassRank, { args: [N, which], nprocs: P }));
    const rs = (await run('reduceScatter')).value as number[][];
    const ar = (await run('allReduce')).value as number[][];
    for (let pos = 0; pos < P; pos++) {
      t.same(rs[pos], Array.from({ length: N }, (_, i) => afterReduceScatter(pos, i)), `reduce-scatter, rank ${pos}: partial sums in the chunks it received, its own chunk unchanged`);
      t.same(ar[pos], Array.from({ length: N }, (_, i) => fullSum(i)), `all-reduce, rank ${pos}: the full sum in every element`);
    }
  });
}

// hello_send, the point-to-point smoke test: rank 0 sends a known tile to
// rank 1, which checks every element and stores it. No bench: the ranks are
// spawned directly and run the kernel as a collective over every rank.
import t from 'tap';
import { SpawnError } from '../lib/errors.js';
import { helloValue } from '../lib/ccl/algorithms/hello_send.js';
import { CCL_FIXTURES, helloWorker, everyRank } from './fixtures/ccl.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());

const N = 256;
const pattern = Array.from({ length: N }, (_, i) => helloValue(i));
const zeros = new Array<number>(N).fill(0);

t.test('rank 1 ends with the tile rank 0 sent; ranks 0 and 2 are untouched', async (t) => {
  const r = await rt.session({ topology: 'ring_1d_6', threads: 1 }, (torch) => torch.multiprocessing.spawn(helloWorker, { args: [N, 'bf16'], nprocs: 3 }));
  t.same(
    everyRank(r.value).map((v) => v.values),
    [zeros, pattern, zeros],
  );
});

t.test('on the ideal ring the receive takes one hop: alpha + N/beta', async (t) => {
  const r = await rt.session({ topology: 'ideal_ring_1d_6', threads: 1 }, (torch) => torch.multiprocessing.spawn(helloWorker, { args: [N, 'f32'], nprocs: 2 }));
  const [, receiver] = everyRank(r.value);
  t.equal(receiver.critNs, 1000 + (N * 4) / 100, 'alpha 1000 ns, 1 KiB at 100 GB/s');
});

t.test('the same data and virtual times under --threads 1, rank, pe and jitter', async (t) => {
  const run = async (threads: 1 | 'rank' | 'pe', jitterSeed: number | null) => {
    const r = await rt.session({ topology: 'ring_1d_6', threads, jitterSeed }, (torch) => torch.multiprocessing.spawn(helloWorker, { args: [N, 'f16'], nprocs: 2 }));
    return { value: r.value, digest: r.digest };
  };
  const ref = await run(1, null);
  t.same([await run('rank', null), await run('pe', null), await run('rank', 9)], [ref, ref, ref]);
});

t.test('hello_send on a world of one rank is refused with ERR_WRONG_WORLD', async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 1 }, async (torch) => {
    const e = await torch.multiprocessing.spawn(helloWorker, { args: [N, 'f32'], nprocs: 1 }).catch((x: unknown) => x);
    t.ok(e instanceof SpawnError);
    t.same([...(e as SpawnError).errors.values()].map((err) => [(err as { code?: string }).code, (err as { cause?: { code?: string } }).cause?.code]), [['ERR_KERNEL', 'ERR_WRONG_WORLD']]);
  });
});

// The determinism contract (DESIGN §4) for host point-to-point: a pipeline
// (rank r sends to r + 1, docs/algorithms/p2p.md) on a torus, whose messages
// take multi-hop routes, gives one result, digest and host clock under --threads
// 1, 2, rank, pe and jitter, with blocking send/recv and with isend/irecv.
import t from 'tap';
import { P2P_FIXTURES, pipelineWorker } from './fixtures/p2p.js';
import { TestRuntime } from './helpers/run.js';
import { PEERS } from './helpers/all-to-all.js';

const rt = new TestRuntime({ modules: [P2P_FIXTURES] });
t.teardown(() => rt.close());

t.test('the pipeline has one result, digest and clock under --threads 1, 2, rank, pe and jitter, blocking and with isend/irecv', async (t) => {
  for (const async of [false, true]) {
    const runs = [];
    for (const [threads, jitterSeed] of [[1, null], [2, null], ['rank', null], ['pe', null], ['rank', 5], [1, 9]] as const) {
      const r = await rt.session({ topology: 'torus_2d_2x3', threads, jitterSeed, sets: PEERS(6) }, (torch) => torch.multiprocessing.spawn(pipelineWorker, { args: [700, 'bf16', 2, async], nprocs: 4 }));
      runs.push({ value: r.value, digest: r.digest });
    }
    t.equal(runs[0].value[3].out.length, 2, 'the last stage got both microbatches');
    for (let i = 1; i < runs.length; i++) t.same(runs[i], runs[0], `async ${async}: run ${i} as the reference`);
  }
});


// Reduction ops (PyTorch's ReduceOp: sum, prod, min, max, avg) for every
// all-reduce algorithm, through torch.distributed.allReduce in spawned ranks:
// every rank's tensor must equal the reference reduction exactly (integer
// data; avg is the sum times 1/count, rounded to f32 then to the dtype, as the
// kernels round it).
import t from 'tap';
import { REDUCE_OPS } from '../lib/ccl/reduce-op.js';
import type { DType } from '../lib/dtype/index.js';
import { CCL_FIXTURES, allReduceWorker, expectedAllReduce, everyRank } from './fixtures/ccl.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES] });
t.teardown(() => rt.close());

const N_ELEM = 37;

const cases = [
  { algorithm: 'ring_allreduce', topology: 'ring_1d_6', ws: 5, dtype: 'f16' as DType },
  { algorithm: 'mesh_allreduce', topology: 'torus_2d_2x3', ws: 6, dtype: 'f16' as DType },
  { algorithm: 'mesh_allreduce_no_wrap', topology: 'mesh_2d_2x3', ws: 6, dtype: 'bf16' as DType },
  { algorithm: 'tree_allreduce', topology: 'ring_1d_6', ws: 6, dtype: 'f32' as DType },
  { algorithm: 'hierarchical_allreduce', topology: 'ring_1d_6', ws: 3, dtype: 'f16' as DType },
  { algorithm: 'hierarchical_allreduce_center', topology: 'ring_1d_6', ws: 2, dtype: 'f32' as DType },
];

for (const c of cases) {
  t.test(`${c.algorithm} on ${c.topology} with ${c.ws} ranks (${c.dtype}): sum, prod, min, max and avg are exact on every rank`, async (t) => {
    const seen: Record<string, boolean> = {};
    for (const op of REDUCE_OPS) {
      const r = await rt.session({ algorithm: c.algorithm, topology: c.topology, threads: 1 }, (torch) =>
        torch.multiprocessing.spawn(allReduceWorker, { args: [{ nElem: N_ELEM, dtype: c.dtype, op }], nprocs: c.ws }),
      );
      const expected = expectedAllReduce(op, c.dtype, N_ELEM, 1, () => Array.from({ length: c.ws }, (_, q): [number, number] => [q, 0]));
      seen[op] = everyRank(r.value).every((v) => JSON.stringify(v.values) === JSON.stringify(expected));
    }
    t.same(seen, Object.fromEntries(REDUCE_OPS.map((op) => [op, true])));
  });
}

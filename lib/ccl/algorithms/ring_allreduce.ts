// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the ring all-reduce kernel — reduce-scatter then all-gather over IPCQ.
// Steps and alpha-beta cost: docs/algorithms/ring_allreduce.md.
//
// p CCL ranks in a ring, each holding n elements cut into p chunks (chunk i is
// [floor(i n / p), floor((i+1) n / p)), so n need not divide by p).
//   reduce-scatter, step s = 0..p-2: send chunk (r - s) east, receive chunk
//     (r - s - 1) from the west and reduce it into the local copy. Rank r ends
//     owning the fully reduced chunk (r + 1) mod p.
//   all-gather, step s = 0..p-2: send chunk (r + 1 - s) east, receive chunk
//     (r - s) from the west and keep it.
// Cost on a uniform ring: 2(p - 1)(alpha + N/(p beta)) for N bytes per rank.
import { defineKernel } from '../../kernel/define.js';
import type { TensorDesc } from '../../runtime/tensor-desc.js';
import type { ReduceOp } from '../reduce-op.js';

const mod = (a: number, p: number): number => ((a % p) + p) % p;

export const allReduce = defineKernel(import.meta.url, 'allReduce', async (tl, t: TensorDesc, op: ReduceOp) => {
  const p = tl.worldSize;
  const r = tl.rank;
  const data = await tl.load(t);
  const n = data.size;
  const lo = (i: number): number => Math.floor((i * n) / p);
  const len = (i: number): number => lo(i + 1) - lo(i);
  const chunk = (i: number) => data.slice(lo(i), len(i));
  const reduceOp = op === 'avg' ? 'sum' : op;

  for (let s = 0; s < p - 1; s++) {
    const sent = tl.send('east', chunk(mod(r - s, p)));
    const into = mod(r - s - 1, p);
    const incoming = await tl.recv('west', len(into), t.dtype);
    data.data.set(tl.reduce(reduceOp, chunk(into), incoming).data, lo(into));
    await sent;
  }
  if (op === 'avg') {
    const own = mod(r + 1, p);
    data.data.set(tl.scale(chunk(own), 1 / p).data, lo(own));
  }
  for (let s = 0; s < p - 1; s++) {
    const sent = tl.send('east', chunk(mod(r + 1 - s, p)));
    const into = mod(r - s, p);
    const incoming = await tl.recv('west', len(into), t.dtype);
    data.data.set(incoming.data, lo(into));
    await sent;
  }
  await tl.store(t, data);
});

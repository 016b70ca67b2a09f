// Runs on: executor threads (one call per spawned rank); each perf bench
// re-exports `perfWorker` so spawn finds it in the bench's module.
// Owns: what one rank does for an nccl-tests style bench — for every size, the
// out-of-place run (input in a send buffer, result in a separate receive buffer)
// and then the in-place run (the result lands in the buffer that held the input),
// each timed by its own collective and checked against the values it must produce.
//
// How each collective runs in place, as nccl-tests does it (decision 0056):
//   all_reduce, broadcast   one buffer. Their kernels are in-place: the out-of-place
//                           run stages the input into the receive buffer (a host
//                           copy, outside virtual time) and runs there, so the
//                           send buffer is never written.
//   all_gather              the input is block `rank` of the receive buffer.
//   reduce_scatter          the output is block `rank` of the send buffer.
//   all_to_all              one buffer: allToAllSingle(t, t). Both kernels (ring and
//                           pairwise) load the whole input before they store the
//                           output, so the call is safe in place; no host copy.
// The last two launch the collective's kernel with a descriptor of that block
// (blockOf): the host API has no tensor views.
import { ALL_GATHER_SENDS, allGather } from '../../lib/ccl/collectives/all_gather.js';
import { REDUCE_SCATTER_SENDS, reduceScatter } from '../../lib/ccl/collectives/reduce_scatter.js';
import type { ReduceOp } from '../../lib/ccl/reduce-op.js';
import { bytesPerElement, type DType } from '../../lib/dtype/index.js';
import { Work } from '../../lib/host/distributed.js';
import type { Tensor } from '../../lib/host/tensor.js';
import type { Torch } from '../../lib/host/torch.js';
import type { TensorDesc } from '../../lib/shm/tensor-desc.js';
import { tabulate, tabulateF32 } from '../../lib/tabulate.js';

/** The collectives with a perf bench (./perf.ts). */
export type CollectiveName = 'all_reduce' | 'all_gather' | 'reduce_scatter' | 'broadcast' | 'all_to_all';

/** Rank `rank`'s input value for element i: small integers, so sums and products are exact in every dtype. */
export const input = (rank: number, i: number): number => ((rank + i) % 3) + 1;

/**
 * The reduction over `ws` ranks of element i. Every rank's input depends on
 * (rank + i) mod 3, so the result depends on i mod 3 only: computed once per residue.
 */
export function expectedByResidue(op: ReduceOp, ws: number): [number, number, number] {
  const one = (i: number): number => {
    const vals = tabulate(ws, (r) => input(r, i));
    switch (op) {
      case 'sum':
        return vals.reduce((a, b) => a + b, 0);
      case 'prod':
        return vals.reduce((a, b) => a * b, 1);
      case 'min':
        return Math.min(...vals);
      case 'max':
        return Math.max(...vals);
      case 'avg':
        return vals.reduce((a, b) => a + b, 0) / ws;
    }
  };
  return [one(0), one(1), one(2)];
}

/** One rank's view of one group (out-of-place or in-place) of one size. */
export interface GroupRun {
  critNs: number;
  /** Wrong elements on this rank (0 when nothing was checked, --no-data). */
  wrong: number;
}

export interface RankRows {
  rows: { outOfPlace: GroupRun; inPlace: GroupRun }[];
  /** The in-place result of the largest size (hashed into the digest). */
  out: Float32Array;
}

/** What the workers are told about one run (structured-cloned to each rank). */
export interface PerfPlan {
  collective: CollectiveName;
  /** Per size: the count the collective is called with (elements per rank for all_gather and reduce_scatter; the whole buffer for all_to_all). */
  counts: number[];
  dtype: DType;
  op: ReduceOp;
  root: number;
  noData: boolean;
}

/** A one-shard 1-D tensor's block `index` of `count` elements, as its own descriptor (same bytes, no copy). */
export function blockOf(desc: TensorDesc, index: number, count: number): TensorDesc {
  const [s] = desc.shards;
  const off = index * count * bytesPerElement(desc.dtype);
  const shard = { ...s, arenaOffset: s.arenaOffset + off, deviceOffset: s.deviceOffset + off, nbytes: count * bytesPerElement(desc.dtype), rows: [0, 1] as [number, number], cols: [0, count] as [number, number] };
  return { ...desc, name: `${desc.name}[${index}]`, shape: [count], shards: [shard] };
}

/**
 * Rank `rank`'s first `count` input values. They depend on rank mod 3 only, so the
 * ranks of a thread share three arrays per size, built once and only read (copy_
 * reads its source): a fresh array per rank was 64 MiB of garbage at p = 1024 x
 * 64 KiB (docs/benchmarks.md, "Peak memory").
 */
function inputs(rank: number, count: number): Float32Array {
  if (shared?.count !== count) shared = { count, byResidue: [] };
  const r = rank % 3;
  return (shared.byResidue[r] ??= tabulateF32(count, (i) => input(r, i)));
}
let shared: { count: number; byResidue: Float32Array[] } | undefined;

export async function perfWorker(rank: number, plan: PerfPlan, torch: Torch): Promise<RankRows> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const ws = torch.distributed.getWorldSize();
  const { dtype, noData } = plan;
  const rows: RankRows['rows'] = [];
  let out: Float32Array = new Float32Array(0);
  const put = async (t: Tensor, values: () => Float32Array): Promise<void> => {
    if (!noData) await t.copy_({ shape: [t.numel], dtype, data: values() });
  };
  // Wrong elements of `t` against want(i); the values are read only when they were moved.
  const check = async (t: Tensor, want: (i: number) => number): Promise<{ wrong: number; data: Float32Array }> => {
    if (noData) return { wrong: 0, data: new Float32Array(0) };
    const data = (await t.numpy()).data;
    let wrong = 0;
    // avg divides in the dtype: allow its rounding, nothing else.
    for (let i = 0; i < data.length; i++) if (plan.op === 'avg' && plan.collective !== 'broadcast' && plan.collective !== 'all_gather' ? Math.abs(data[i] - want(i)) > Math.abs(want(i)) * 2 ** -7 : data[i] !== want(i)) wrong++;
    return { wrong, data };
  };
  const reduced = expectedByResidue(plan.op, ws);
  for (const n of plan.counts) {
    let oop: GroupRun, ip: GroupRun;
    switch (plan.collective) {
      case 'all_reduce': {
        const send = torch.zeros([n], { dtype }), recv = torch.zeros([n], { dtype });
        await put(send, () => inputs(rank, n));
        await put(recv, () => inputs(rank, n));
        const w1 = await torch.distributed.allReduce(recv, { op: plan.op });
        oop = { critNs: w1.critNs, wrong: (await check(recv, (i) => reduced[i % 3])).wrong };
        await torch.distributed.barrier();
        const w2 = await torch.distributed.allReduce(send, { op: plan.op });
        const c = await check(send, (i) => reduced[i % 3]);
        ip = { critNs: w2.critNs, wrong: c.wrong };
        out = c.data;
        break;
      }
      case 'broadcast': {
        const send = torch.zeros([n], { dtype }), recv = torch.zeros([n], { dtype });
        if (rank === plan.root) {
          await put(send, () => inputs(rank, n));
          await put(recv, () => inputs(rank, n));
        }
        const w1 = await torch.distributed.broadcast(recv, { src: plan.root });
        oop = { critNs: w1.critNs, wrong: (await check(recv, (i) => input(plan.root, i))).wrong };
        await torch.distributed.barrier();
        const w2 = await torch.distributed.broadcast(send, { src: plan.root });
        const c = await check(send, (i) => input(plan.root, i));
        ip = { critNs: w2.critNs, wrong: c.wrong };
        out = c.data;
        break;
      }
      case 'all_gather': {
        const send = torch.zeros([n], { dtype }), recv = torch.zeros([n * ws], { dtype });
        await put(send, () => inputs(rank, n));
        const w1 = await torch.distributed.allGather(recv, send);
        const gathered = (i: number): number => input(Math.floor(i / n), i % n);
        oop = { critNs: w1.critNs, wrong: (await check(recv, gathered)).wrong };
        await torch.distributed.barrier();
        // In place: this rank's input is block `rank` of the receive buffer, the other blocks zero.
        await put(recv, () => tabulateF32(n * ws, (i) => (Math.floor(i / n) === rank ? input(rank, i % n) : 0)));
        const desc = recv.toDesc();
        const w2 = new Work(torch.distributed.launchCollective('all_gather', allGather, recv, [desc, blockOf(desc, rank, n)], { leadingTensor: false, sends: ALL_GATHER_SENDS }));
        await w2.wait();
        const c = await check(recv, gathered);
        ip = { critNs: w2.critNs, wrong: c.wrong };
        out = c.data;
        break;
      }
      case 'reduce_scatter': {
        const send = torch.zeros([n * ws], { dtype }), recv = torch.zeros([n], { dtype });
        await put(send, () => inputs(rank, n * ws));
        const w1 = await torch.distributed.reduceScatter(recv, send, { op: plan.op });
        const mine = (i: number): number => reduced[(rank * n + i) % 3];
        oop = { critNs: w1.critNs, wrong: (await check(recv, mine)).wrong };
        await torch.distributed.barrier();
        // In place: the result is block `rank` of the send buffer (which still holds the input).
        const desc = send.toDesc();
        const w2 = new Work(torch.distributed.launchCollective('reduce_scatter', reduceScatter, send, [blockOf(desc, rank, n), desc, plan.op], { leadingTensor: false, sends: REDUCE_SCATTER_SENDS }));
        await w2.wait();
        // Only block `rank` is the result; the other blocks keep the input (nccl-tests checks the result block).
        const c = await check(send, (i) => (Math.floor(i / n) === rank ? mine(i % n) : input(rank, i)));
        ip = { critNs: w2.critNs, wrong: c.wrong };
        out = c.data;
        break;
      }
      case 'all_to_all': {
        // n is a multiple of ws: block j (n / ws elements) of rank r's output is rank j's block r of its input.
        const send = torch.zeros([n], { dtype }), recv = torch.zeros([n], { dtype });
        // The input also carries its rank (mod 4): with input() alone, (rank + i) mod 3,
        // a transposed exchange reads right whenever the block size is 1 mod 3.
        const b = n / ws;
        const value = (r: number, i: number): number => input(r, i) + 3 * (r % 4);
        await put(send, () => tabulateF32(n, (i) => value(rank, i)));
        const exchanged = (i: number): number => value(Math.floor(i / b), rank * b + (i % b));
        const w1 = await torch.distributed.allToAllSingle(recv, send);
        oop = { critNs: w1.critNs, wrong: (await check(recv, exchanged)).wrong };
        await torch.distributed.barrier();
        const w2 = await torch.distributed.allToAllSingle(send, send);
        const c = await check(send, exchanged);
        ip = { critNs: w2.critNs, wrong: c.wrong };
        out = c.data;
        break;
      }
    }
    rows.push({ outOfPlace: oop, inPlace: ip });
    await torch.distributed.barrier();
  }
  return { rows, out };
}

// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: host point-to-point as a kernel (torch.distributed.send, recv, isend,
// irecv and batchIsendIrecv): one launch per op, or per batch, on the PE that
// holds the tensors, addressing the peer by its group rank (tl.peer, on the
// peer ring of the ordered pair: docs/decisions/0060-peer-channels.md).
// Steps and matching: docs/algorithms/p2p.md.
//   every send of the batch is loaded and started (in the background), in the
//   batch's order, then every receive is started; then the receives are waited
//   for and stored, in order, and last the sends.
//   Sends from rank a to rank b share the one ring a -> b, so the k-th send
//   a -> b meets the k-th receive at b from a: matching by (src, dst, order).
//   T = alpha + N / beta a message of N bytes, on the route's links.
import { defineKernel } from '../../kernel/define.js';
import type { RecvFuture, SendHandle } from '../../kernel/context.js';
import type { TensorDesc } from '../../shm/tensor-desc.js';

/** One op of a batch: send `t` to group rank `peer`, or receive into `t` from it. */
export interface P2PKernelOp {
  kind: 'send' | 'recv';
  peer: number;
  t: TensorDesc;
}

export const p2pBatch = defineKernel(import.meta.url, 'p2pBatch', async (tl, ops: readonly P2PKernelOp[]) => {
  const sends: SendHandle[] = [];
  for (const op of ops) {
    if (op.kind === 'send') sends.push(tl.send(tl.peer(op.peer), await tl.load(op.t)));
  }
  const recvs: { t: TensorDesc; f: RecvFuture }[] = [];
  for (const op of ops) {
    if (op.kind === 'recv') recvs.push({ t: op.t, f: tl.recvAsync(tl.peer(op.peer), op.t.shape, op.t.dtype) });
  }
  for (const { t, f } of recvs) await tl.store(t, await tl.wait(f));
  for (const s of sends) await s;
});

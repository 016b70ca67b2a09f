// Runs on: a host thread. Owns: P2POp, one operation of
// torch.distributed.batchIsendIrecv (PyTorch's P2POp), and the options the
// point-to-point calls take. The calls themselves are Distributed's
// (./distributed.ts); their kernel is lib/ccl/collectives/p2p.ts.
import type { ProcessGroup } from '../ccl/process-group.js';
import type { Tensor } from './tensor.js';

/** Options of send / isend: the group, and the destination as a group rank instead of a global one. */
export interface SendOptions {
  group?: ProcessGroup;
  /** The destination's rank in `group` (give it, or the global `dst`, not both). */
  groupDst?: number;
}

/** Options of recv / irecv: the group, and the source as a group rank instead of a global one. */
export interface RecvOptions {
  group?: ProcessGroup;
  /** The source's rank in `group` (give it, or the global `src`, not both). */
  groupSrc?: number;
}

/** What a P2POp does: `dist.isend` or `dist.irecv` (the functions themselves, as in PyTorch), or their names. */
export type P2POpFunction = 'isend' | 'irecv' | ((...args: never[]) => unknown);

/**
 * One send or receive of a batch (PyTorch's P2POp): `peer` is a global rank, or
 * give `groupPeer`, a rank of `group`, instead. `tag` is accepted and ignored, as
 * by PyTorch's NCCL backend: messages between two ranks match in call order.
 */
export class P2POp {
  constructor(
    readonly op: P2POpFunction,
    readonly tensor: Tensor,
    readonly peer?: number,
    readonly group?: ProcessGroup,
    readonly tag = 0,
    readonly groupPeer?: number,
  ) {}
}

// Runs on: a host thread. Owns: P2POp, one operation of
// torch.distributed.batchIsendIrecv (PyTorch's P2POp), the options the
// point-to-point calls take, and the checks of their peers and op kinds. The calls themselves are Distributed's
// (./distributed.ts); their kernel is lib/ccl/collectives/p2p.ts.
import type { ProcessGroup } from '../ccl/process-group.js';
import { KernbenchError } from '../errors.js';
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

/** What P2POp `op` names: isend or irecv (the functions `isend` and `irecv` given, bound or not, or their names). */
export function p2pKind(op: P2POp['op'], i: number, isend: unknown, irecv: unknown): 'send' | 'recv' {
  if (op === 'isend' || op === isend || (typeof op === 'function' && op.name === 'bound isend')) return 'send';
  if (op === 'irecv' || op === irecv || (typeof op === 'function' && op.name === 'bound irecv')) return 'recv';
  throw new KernbenchError('ERR_INVALID_P2P_OP', `batchIsendIrecv: a P2POp's op must be dist.isend or dist.irecv, got ${typeof op === 'function' ? `function ${op.name || '(anonymous)'}` : JSON.stringify(op)} for op ${i}`);
}

/** The group rank of a p2p op's peer: global `rank`, or `groupRank` of the group; not `me` (this rank's group rank). */
export function peerGroupRank(name: string, group: ProcessGroup, rank: number | undefined, groupRank: number | undefined, me: number): number {
  if ((rank === undefined || rank === null) === (groupRank === undefined || groupRank === null)) {
    throw new KernbenchError('ERR_INVALID_RANK', `${name}: give the peer as a global rank or as a rank of the group, exactly one of them, got ${rank} and group rank ${groupRank}`);
  }
  const q = groupRank ?? group.groupRank(rank as number);
  if (!Number.isInteger(q) || q < 0 || q >= group.size) {
    throw new KernbenchError('ERR_INVALID_RANK', `${name}: the peer must be a member of ${group}, got ${groupRank === undefined ? `global rank ${rank}` : `group rank ${groupRank}`}`);
  }
  if (q === me) throw new KernbenchError('ERR_INVALID_PEER', `${name}: a rank cannot send to or receive from itself, got rank ${group.globalRank(q)} on ${group}`);
  return q;
}


/** Peer-addressed kernels on `group` need peer channels for it (decision 0060), `peerRanks` being ccl.peer_ranks: say which setting. */
export function checkPeerChannels(peerRanks: number | undefined, name: string, group: ProcessGroup): void {
  const have = peerRanks ?? 0;
  if (group.size === 1 || have >= group.size) return;
  throw new KernbenchError('ERR_NO_PEER_CHANNELS', `${name} on ${group}: point-to-point and the list all-to-all address peers by rank; run with ccl.peer_ranks >= ${group.size} (--set ccl.peer_ranks=${group.size}), got ccl.peer_ranks = ${have}`);
}


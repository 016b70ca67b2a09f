// Runs on: host threads. Owns: ProcessGroup, a set of ranks that run
// collectives together (torch.distributed's default group and newGroup).
// Group ranks are the members' global ranks in increasing order (as PyTorch
// sorts new_group's ranks); collectives on a group build their worlds over
// the members' SIPs only.
import { KernbenchError } from '../errors.js';

export class ProcessGroup {
  readonly ranks: readonly number[];

  constructor(ranks: readonly number[], worldSize: number) {
    const seen = new Set<number>();
    for (const r of ranks) {
      if (!Number.isInteger(r) || r < 0 || r >= worldSize || seen.has(r)) {
        throw new KernbenchError('ERR_INVALID_ARG', `newGroup: ranks must be distinct integers in [0, ${worldSize}), got [${ranks.join(', ')}]`);
      }
      seen.add(r);
    }
    if (ranks.length === 0) throw new KernbenchError('ERR_INVALID_ARG', 'newGroup: a group needs at least one rank, got []');
    this.ranks = Object.freeze([...ranks].sort((a, b) => a - b));
  }

  get size(): number {
    return this.ranks.length;
  }

  /** The group rank of global rank `global`, or -1 if it is not a member (PyTorch's get_group_rank). */
  groupRank(global: number): number {
    return this.ranks.indexOf(global);
  }

  /** The global rank of group rank `r`. */
  globalRank(r: number): number {
    return this.ranks[r];
  }

  toString(): string {
    return `ProcessGroup([${this.ranks.join(', ')}])`;
  }
}

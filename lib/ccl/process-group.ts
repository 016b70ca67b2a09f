// Runs on: host threads. Owns: ProcessGroup, a set of ranks that run
// collectives together (torch.distributed's default group and newGroup), and
// which channel set (lib/shm/layout.ts: a copy of every PE's rings) carries
// its collectives' traffic.
// Group ranks are the members' global ranks in increasing order (as PyTorch
// sorts new_group's ranks); collectives on a group build their worlds over
// the members' SIPs only.
//
// Channel sets (docs/decisions/0020-a-channel-set-per-process-group.md): the
// world has set 0; each new group takes the smallest set >= 1 that no earlier
// group sharing a rank with it has. Groups that share no rank never share a
// ring (rings belong to their sender PE, and a group's PEs are its members'),
// so they may share a set. Every rank creates the same groups in the same
// order (PyTorch's new_group rule), so every rank assigns the same sets.
import { KernbenchError } from '../errors.js';

export class ProcessGroup {
  readonly ranks: readonly number[];

  constructor(
    ranks: readonly number[],
    worldSize: number,
    /** The channel set of its collectives (0: the world's). */
    readonly set = 0,
  ) {
    if (ranks === everyRankOf.get(worldSize)) {
      // The thread's own list of every rank (ProcessGroup.world): valid by construction, and
      // checking it was O(p) per rank, p^2 a thread at start-up (decision 0150).
      this.ranks = ranks;
      return;
    }
    const seen = new Set<number>();
    for (const r of ranks) {
      if (!Number.isInteger(r) || r < 0 || r >= worldSize || seen.has(r)) {
        throw new KernbenchError('ERR_INVALID_RANK', `newGroup: ranks must be distinct integers in [0, ${worldSize}), got [${ranks.join(', ')}]`);
      }
      seen.add(r);
    }
    if (ranks.length === 0) throw new KernbenchError('ERR_INVALID_RANK', 'newGroup: a group needs at least one rank, got []');
    // Distinct ranks in [0, worldSize), worldSize of them: every rank, the list a thread shares.
    this.ranks = ranks.length === worldSize ? everyRank(worldSize) : Object.freeze([...ranks].sort((a, b) => a - b));
  }

  /** The default group of `worldSize` ranks (initProcessGroup): O(1) a rank, every rank of a thread sharing one member list. */
  static world(worldSize: number): ProcessGroup {
    return new ProcessGroup(everyRank(worldSize), worldSize, 0);
  }

  get size(): number {
    return this.ranks.length;
  }

  /** The group rank of global rank `global`, or -1 if it is not a member (PyTorch's get_group_rank). */
  groupRank(global: number): number {
    // The members are distinct and sorted, so ranks[i] >= i: ranks[global] === global is the
    // world's O(1) answer; otherwise a binary search. indexOf was O(p) per call, p^2 a
    // collective over the ranks (decision 0150).
    const ranks = this.ranks;
    if (ranks[global] === global) return global;
    let lo = 0;
    let hi = ranks.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const r = ranks[mid];
      if (r === global) return mid;
      if (r < global) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The global rank of group rank `r`. */
  globalRank(r: number): number {
    return this.ranks[r];
  }

  /**
   * Refuse a collective `name` on this group when its channel set is beyond the
   * session's `channelSets` (ccl.channel_sets): say which setting to raise.
   */
  checkChannelSet(name: string, channelSets: number): void {
    if (this.set < channelSets) return;
    throw new KernbenchError(
      'ERR_CHANNEL_SETS_EXHAUSTED',
      `${name} on ${this}: this group needs channel set ${this.set} (groups that share a rank run on different sets; the world has set 0), but the run has ccl.channel_sets = ${channelSets}; raise it to ${this.set + 1} or more (--set ccl.channel_sets=${this.set + 1}, or channel_sets in the CCL file), got channel set ${this.set}`,
    );
  }

  toString(): string {
    return `ProcessGroup([${this.ranks.join(', ')}])`;
  }
}

/** The channel set of a new group of `ranks`, after `earlier` groups (the world first): the smallest that no overlapping earlier group has. */
export function nextChannelSet(ranks: readonly number[], earlier: readonly ProcessGroup[]): number {
  // A Set of the new group's ranks: ranks.includes inside some() was O(|g| x |ranks|) per earlier group.
  const mine = new Set(ranks);
  const taken = new Set(earlier.filter((g) => g.ranks.some((r) => mine.has(r))).map((g) => g.set));
  let set = 0;
  while (taken.has(set)) set++;
  return set;
}

/**
 * [0, 1, ..., worldSize - 1], frozen, one per thread and world size: every rank of a
 * thread holds the world group, and a list of its own per rank was p^2 numbers per
 * thread (8 MiB at p = 1024 under --threads 1; docs/benchmarks.md, "Peak memory",
 * 2026-11-25).
 */
function everyRank(worldSize: number): readonly number[] {
  let ranks = everyRankOf.get(worldSize);
  if (ranks === undefined) {
    ranks = Object.freeze(Array.from({ length: worldSize }, (_, r) => r));
    everyRankOf.set(worldSize, ranks);
  }
  return ranks;
}
const everyRankOf = new Map<number, readonly number[]>();

// Runs on: any thread. Owns: how an IPCQ ring is named — the four directions
// of a PE's ports, a ring's id from its sender PE and direction, and the
// channel sets of the peer-channel families (decision 0060), which say how many
// sets a session has and which ring two ranks share. It changes when the
// addressing of rings does; the words of a ring and its slots are
// ./layout-words.ts's. Re-exported by ./layout.ts.

/**
 * Directions of a PE's IPCQ ports. A ring is identified by (channel set,
 * sender PE, direction): each process group that runs collectives uses the
 * rings of its own channel set (the world and plain launches: set 0), so a
 * subgroup's traffic never shares a ring with another group's
 * (docs/decisions/0020-a-channel-set-per-process-group.md).
 */
export const DIRECTIONS = ['east', 'west', 'north', 'south'] as const;
export type Direction = (typeof DIRECTIONS)[number];
export const DIR_COUNT = DIRECTIONS.length;

/**
 * Peer channels (docs/decisions/0060-peer-channels.md): each of the `channelSets`
 * group sets has a family of peerSetsPerGroup(peerRanks) sets after the group
 * sets; the ring from group rank r to rank q (distance k = (q - r) mod p, 1 <= k < p)
 * is the sender PE's ring of direction (k - 1) mod 4 in the family's set
 * floor((k - 1) / 4). Every ordered pair owns a ring; one never used is never touched.
 */
export function peerSetsPerGroup(peerRanks: number | undefined): number {
  return peerRanks === undefined || peerRanks < 2 ? 0 : Math.ceil((peerRanks - 1) / DIR_COUNT);
}

/** Every channel set of a session: the group sets and their peer families. */
export function totalChannelSets(channelSets: number, peerRanks: number | undefined): number {
  return channelSets * (1 + peerSetsPerGroup(peerRanks));
}

/** The set and direction of the peer ring at distance `k` (1 <= k < peerRanks) in group set `groupSet`'s family. */
export function peerRing(channelSets: number, peerRanks: number, groupSet: number, k: number): { set: number; dir: number } {
  const f = peerSetsPerGroup(peerRanks);
  return { set: channelSets + groupSet * f + Math.floor((k - 1) / DIR_COUNT), dir: (k - 1) % DIR_COUNT };
}

/** The ring of channel set 0 (the world's) on which `senderPe` sends in direction `dir`; ShmLayout.ringOf for any set. */
export function ringId(senderPe: number, dir: number): number {
  return senderPe * DIR_COUNT + dir;
}

export function dirIndex(d: Direction): number {
  return DIRECTIONS.indexOf(d);
}

export function oppositeDir(d: number): number {
  return d ^ 1; // east<->west, north<->south
}

// Runs on: main thread (tap). Owns: what the all-to-all and peer tests share — the
// setting that gives a world peer channels and the values a group rank must hold.
import { cclValue } from '../fixtures/ccl.js';

/** The --set that gives a world of p ranks peer channels. */
export const PEERS = (p: number): string[] => [`ccl.peer_ranks=${p}`];
export const range = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

/** What group rank r must hold: block s is member s's input block r (inputs are cclValue('sum', global rank, 0, i)). */
export function expected(members: number[], r: number, n: number): number[] {
  return range(members.length * n, (j) => cclValue('sum', members[Math.floor(j / n)], 0, r * n + (j % n)));
}

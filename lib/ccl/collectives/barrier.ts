// Runs on: executor threads (the kernel); imported by hosts for its reference.
// Owns: the barrier of a process group made by newGroup. The host barrier
// counts arrivals of all ranks on one global counter, so a subgroup cannot use
// it; instead its barrier is a tiny collective: a ring all-reduce (sum) of a
// p-element f32 tile (one element per rank, so every ring step moves one
// element), on PE (cube 0, pe 0) of each member's SIP. No rank can finish it
// before every rank has started it. Cost: 2(p - 1)(alpha + 4 B/beta).
import { defineKernel } from '../../kernel/define.js';
import { Chunks, ringAllReduce } from '../steps.js';
import type { Direction } from '../../shm/layout.js';

/** Where `groupBarrier` sends, declared at its launch (decision 0188). */
export const BARRIER_SENDS: readonly Direction[] = ['east'];

export const groupBarrier = defineKernel(import.meta.url, 'groupBarrier', async (tl) => {
  const p = tl.worldSize;
  const token = tl.zeros(p, 'f32');
  token.data[tl.rank] = 1;
  await ringAllReduce(tl, token, new Chunks(0, p, p), { p, pos: tl.rank, send: 'east', recv: 'west' }, 'sum', p);
});

// A bidirectional ring all-reduce: kernbench ships a one-way ring
// (ring_allreduce); this one uses both directions of every ring link at once.
//
// Each rank's n elements are split in two halves, and each half runs its own
// ring all-reduce (reduce-scatter, then all-gather):
//   half A [0, n/2)  around the ring eastward: send east, receive from the west
//   half B [n/2, n)  around the ring westward: send west, receive from the east
// Each half is cut into p chunks (kernbench's Chunks: sizes differ by at most
// one, so n need not divide by 2p).
//
// Determinism: the two rings run in ONE flow of control. Every step issues its
// two sends, then awaits the two receives in a fixed order (east-bound ring
// first), then the two sends. Two independent async loops joined with
// Promise.all would also give the right data, but which one resumes first after
// a wait would then depend on arrival order, and the trace with it.
//
// Cost on the ideal topology (alpha-beta links, everything else free), for N
// bytes per rank on p ranks: each of the 2(p - 1) steps sends one chunk of
// N/(2p) bytes each way, on separate links, so a step costs
// alpha + N/(2p beta) and
//     T = 2 (p - 1) (alpha + N / (2 p beta))
// — the one-way ring's latency term, half its bandwidth term. Exact while each
// chunk travels as one IPCQ message (N/(2p) <= vc_chunk_size) and the credit
// window does not throttle: see README.md.
import { Chunks, ScratchTiles, defineAlgorithm, defineKernel, reductionOf, scaleChunk, sendDone } from 'kernbench/kernel';
import type { Direction, KernelContext, ReduceOp, SendHandle, TensorDesc, Tile, WorldShape } from 'kernbench/kernel';

export const meta = defineAlgorithm({
  provides: 'all_reduce',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  summary: 'bidirectional ring: half the data eastward, half westward, 2(p-1) steps of N/(2p) bytes each way',
});

/** One direction's ring: its half of the data, this rank's position along it, and its links. */
interface Ring {
  seg: Chunks;
  pos: number;
  send: Direction;
  recv: Direction;
  /** Receive buffers of this ring (both rings' receives are in flight at once, so each has its own). */
  scratch: ScratchTiles;
}

const mod = (a: number, p: number): number => ((a % p) + p) % p;

export const allReduce = defineKernel(import.meta.url, 'allReduce', async (tl: KernelContext, t: TensorDesc, op: ReduceOp, _shape: WorldShape) => {
  const p = tl.worldSize;
  const data = await tl.load(t);
  const half = Math.floor(data.size / 2);
  const rings: Ring[] = [
    // Eastward: the successor of rank r is r + 1, so its position is r.
    { seg: new Chunks(0, half, p), pos: tl.rank, send: 'east', recv: 'west', scratch: new ScratchTiles(tl, data.dtype) },
    // Westward: the successor of rank r is r - 1, so positions run backwards.
    { seg: new Chunks(half, data.size - half, p), pos: p - 1 - tl.rank, send: 'west', recv: 'east', scratch: new ScratchTiles(tl, data.dtype) },
  ];
  const reduction = reductionOf(op);

  // Reduce-scatter: in step s each ring sends chunk (pos - s) and reduces chunk
  // (pos - s - 1) from its predecessor; the rank ends owning chunk (pos + 1).
  for (let s = 0; s < p - 1; s++) {
    const sent = rings.map((r) => tl.send(r.send, r.seg.of(data, mod(r.pos - s, p))));
    for (const r of rings) {
      const mine = r.seg.of(data, mod(r.pos - s - 1, p));
      const incoming = await tl.recv(r.recv, mine.size, data.dtype, r.scratch.of(mine.size));
      tl.reduce(reduction, mine, incoming, mine);
    }
    await awaitSends(tl, sent);
  }
  if (op === 'avg') for (const r of rings) scaleChunk(tl, data, r.seg, mod(r.pos + 1, p), 1 / p);

  // All-gather: in step s each ring sends chunk (pos + 1 - s) and keeps chunk (pos - s).
  for (let s = 0; s < p - 1; s++) {
    const sent = rings.map((r) => tl.send(r.send, r.seg.of(data, mod(r.pos + 1 - s, p))));
    for (const r of rings) {
      const into: Tile = r.seg.of(data, mod(r.pos - s, p));
      await tl.recv(r.recv, into.size, data.dtype, into);
    }
    await awaitSends(tl, sent);
  }
  await tl.store(t, data);
});

/** Await a step's sends in ring order (east-bound first). */
async function awaitSends(tl: KernelContext, sent: SendHandle[]): Promise<void> {
  for (const h of sent) await sendDone(tl, h);
}

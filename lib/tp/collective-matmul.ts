// Runs on: executor threads (launched by layers.ts through
// torch.distributed.launchCollective, one PE per tensor-parallel rank on a
// ring). Owns: the two "collective matmul" kernels of the layers' overlap
// option (Wang et al. 2023; PyTorch's async TP): a ring collective fused with
// the GEMM it feeds or drains, so each step's transfer is in flight while the
// PE multiplies (a tl.send's DMA runs in the background while tl.dot advances
// the PE's clock).
//
//   allGatherGemm       y [m, n] = allGather(x) @ w (+ bias); x is this rank's
//                       m / p rows. Step s: send the block held (rank r - s)
//                       east, multiply it into rows block (r - s) of y, then
//                       receive block (r - s - 1) from the west.
//   gemmReduceScatter   y [m / p, N] = rows block r of sum over ranks of x @ w.
//                       Step 0 sends the partial product of block r - 1 east;
//                       step s multiplies block (r - s - 2) while the previous
//                       send is in flight, receives that block's running sum
//                       from the west, adds its own, and passes it on; the last
//                       step leaves block r fully reduced.
//
// Numbers: each block's product is tl.dot over the full K, rounded once to y's
// dtype (the gemm kernel's rule), and the ring adds the partial sums in the
// order of the ring reduce-scatter (block c starts at rank c + 1), so the
// results are bit-identical to all-gather then gemm, and gemm then
// reduce-scatter (test/tp-overlap.test.ts).
//
// Exposed communication: the virtual time a step spends waiting for its
// receive and its send (tl.nowPs around them) is what no GEMM hid; each kernel
// reports the sum with tl.reportWaitPs, and the host reads it from the launch's
// timings (timeline.ts).
import { defineKernel } from '../kernel/define.js';
import type { TensorDesc } from '../shm/tensor-desc.js';
import type { Tile } from '../tile/tile.js';
import { broadcastRow, reshape } from './tile-ops.js';
import type { Direction } from '../shm/layout.js';

/** Where both kernels send, declared at their launch (decision 0188). */
export const COLLECTIVE_MATMUL_SENDS: readonly Direction[] = ['east'];

const mod = (a: number, p: number): number => ((a % p) + p) % p;

/** Rows [i rows, (i + 1) rows) of a [*, cols] tile, as a [rows, cols] view (free, as a layout op). */
function rowBlock(t: Tile, i: number, rows: number, cols: number): Tile {
  return reshape(t.slice(i * rows * cols, rows * cols), [rows, cols]);
}

export const allGatherGemm = defineKernel(import.meta.url, 'allGatherGemm', async (tl, x: TensorDesc, w: TensorDesc, y: TensorDesc, bias: TensorDesc | null) => {
  const p = tl.worldSize;
  const r = tl.rank;
  const [rows, k] = x.shape;
  const n = w.shape[1];
  const wt = await tl.load(w);
  const b = bias ? broadcastRow(tl, await tl.load(bias), rows) : null;
  let block = await tl.load(x);
  let waited = 0;
  for (let s = 0; s < p; s++) {
    const last = s === p - 1;
    const sent = last ? null : tl.send('east', block);
    let acc = tl.dot(block, wt);
    if (b) acc = tl.add(acc, b);
    await tl.store(y, tl.to(acc, y.dtype), { offset: mod(r - s, p) * rows * n });
    if (sent) {
      const from = tl.nowPs;
      block = await tl.recv('west', [rows, k], x.dtype);
      await sent;
      waited += tl.nowPs - from;
    }
  }
  tl.reportWaitPs(waited);
});

export const gemmReduceScatter = defineKernel(import.meta.url, 'gemmReduceScatter', async (tl, x: TensorDesc, w: TensorDesc, y: TensorDesc) => {
  const p = tl.worldSize;
  const r = tl.rank;
  const [m, k] = x.shape;
  const rows = m / p;
  const xt = await tl.load(x);
  const wt = await tl.load(w);
  const partial = (c: number): Tile => tl.to(tl.dot(rowBlock(xt, c, rows, k), wt), y.dtype);
  if (p === 1) {
    await tl.store(y, partial(0));
    return;
  }
  let sent = tl.send('east', partial(mod(r - 1, p)));
  let waited = 0;
  for (let s = 0; s < p - 1; s++) {
    const mine = partial(mod(r - s - 2, p));
    const from = tl.nowPs;
    const incoming = await tl.recv('west', mine.shape, y.dtype);
    await sent;
    waited += tl.nowPs - from;
    tl.reduce('sum', mine, incoming, mine);
    if (s < p - 2) sent = tl.send('east', mine);
    else await tl.store(y, mine);
  }
  tl.reportWaitPs(waited);
});

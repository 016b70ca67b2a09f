// Runs on: main (bench sim_throughput). Owns: the floor of what one thread can
// reach with kernbench's programming model — the ring all-reduce written as p
// async coroutines on one thread, with its data, and nothing else.
//
// Each rank holds n f32 values cut into p chunks and runs the same 2(p - 1)
// steps as ring_allreduce: put the outgoing chunk into a slot of its ring
// (n_slots slots, a copy), take the incoming chunk (a copy; if it is not there
// yet, wait on a plain promise its predecessor resolves), add it in
// (reduce-scatter, the same add as tl.add: addTiles on slab tiles, the SIMD
// path) or keep it (all-gather), and await undefined for the send — the two
// awaits per step of lib/ccl/steps.ts when sends complete as issued (sendDone). No virtual time, no SharedArrayBuffer, no Atomics, no
// launches, no deadlock bookkeeping. bench sim_throughput prints --threads 1 as
// a fraction of it.
import { addTiles } from '../../lib/kernel/math.js';
import { allocTile } from '../../lib/tile/slab.js';
import type { Tile } from '../../lib/tile/tile.js';

/**
 * Run the model ring all-reduce of p ranks with n elements each `rounds` times
 * (default once), chunks cut into pieces of `pieceElems` elements (one slot and
 * one message each, as vc_chunk_size cuts IPCQ payloads); wall ms from the first
 * step to the last, and whether every element came out as p^rounds.
 */
export async function modelFloor(p: number, n: number, pieceElems: number, rounds = 1): Promise<{ ms: number; ok: boolean }> {
  const bounds = Array.from({ length: p + 1 }, (_, i) => Math.floor((i * n) / p));
  const maxChunk = Math.ceil(n / p);
  const piecesPerChunk = Math.max(1, Math.ceil(maxChunk / pieceElems));
  // Room for four chunks in flight per ring (no credits here; two were enough at every p tried).
  const nSlots = 4 * piecesPerChunk;
  const data = Array.from({ length: p }, () => {
    const d = allocTile('f32', [n], n);
    d.data.fill(1);
    return d;
  });
  // Chunk views made once, as lib/ccl/steps.ts Chunks does; a scratch tile per rank and chunk length.
  const chunks = data.map((d) => Array.from({ length: p }, (_, c) => d.slice(bounds[c], bounds[c + 1] - bounds[c])));
  const scratch = Array.from({ length: p }, () => allocTile('f32', [maxChunk], maxChunk));
  const scratchOf = scratch.map((sc) => new Map<number, Tile>(Array.from({ length: 2 }, (_, k) => [maxChunk - k, sc.slice(0, maxChunk - k)])));
  // Ring r carries rank r's sends to rank r + 1.
  const slots = Array.from({ length: p }, () => Array.from({ length: nSlots }, () => new Float32Array(pieceElems)));
  const sizes = Array.from({ length: p }, () => new Int32Array(nSlots));
  const tail = new Int32Array(p);
  const head = new Int32Array(p);
  const waiting: ((() => void) | null)[] = Array.from({ length: p }, () => null);
  const mod = (a: number): number => ((a % p) + p) % p;
  const piecesOf = (len: number): number => Math.max(1, Math.ceil(len / pieceElems));

  const send = (r: number, src: Float32Array): void => {
    for (let at = 0, i = 0; i < piecesOf(src.length); i++, at += pieceElems) {
      const k = tail[r];
      if (k - head[r] >= nSlots) throw new Error(`model ring ${r}: more than ${nSlots / piecesPerChunk} chunks in flight; the model has no credits and assumes ranks stay within a few steps of each other`);
      const piece = src.subarray(at, Math.min(at + pieceElems, src.length));
      slots[r][k % nSlots].set(piece);
      sizes[r][k % nSlots] = piece.length;
      tail[r] = k + 1;
    }
    const w = waiting[mod(r + 1)];
    if (w) {
      waiting[mod(r + 1)] = null;
      w();
    }
  };
  const take = (ring: number, out: Float32Array): Float32Array => {
    let at = 0;
    for (let i = 0; i < piecesOf(out.length); i++) {
      const k = head[ring] % nSlots;
      const m = sizes[ring][k];
      out.set(m === pieceElems ? slots[ring][k] : slots[ring][k].subarray(0, m), at);
      at += m;
      head[ring]++;
    }
    return out;
  };
  const recv = (r: number, out: Float32Array): Promise<Float32Array> => {
    const ring = mod(r - 1);
    if (tail[ring] - head[ring] >= piecesOf(out.length)) return Promise.resolve(take(ring, out));
    return new Promise((resolve) => (waiting[r] = () => resolve(take(ring, out))));
  };

  const rank = async (r: number): Promise<void> => {
    const cs = chunks[r];
    for (let s = 0; s < p - 1; s++) {
      send(r, cs[mod(r - s)].data);
      const mine = cs[mod(r - s - 1)];
      const into = scratchOf[r].get(mine.size) as Tile;
      await recv(r, into.data);
      addTiles(mine, into, mine);
      await undefined;
    }
    for (let s = 0; s < p - 1; s++) {
      send(r, cs[mod(r + 1 - s)].data);
      await recv(r, cs[mod(r - s)].data);
      await undefined;
    }
  };

  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) await Promise.all(Array.from({ length: p }, (_, r) => rank(r)));
  const ms = performance.now() - t0;
  const want = p ** rounds;
  return { ms, ok: data.every((d) => allEqual(d.data, want)) };
}

/**
 * Whether every element of `a` is `v`: a rank's check of its result. A plain loop in a
 * function of its own, not `a.every(...)`, whose builtin calls a closure an element
 * (docs/author-guide.md, "A check every rank runs").
 */
export function allEqual(a: Float32Array, v: number): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== v) return false;
  return true;
}

// Runs on: main thread (tap). Covers: lib/tile/simd.ts and lib/tile/slab.ts
// — the WebAssembly f32x4 add gives the scalar loop's bits for every kind of
// f32, NaN payloads included (it is chosen by where tiles happen to be allocated, which differs
// between thread layouts), falls back correctly when it cannot apply, and
// slabs are recycled zeroed once the kernels with tiles in them ended (an epoch's end
// when no kernel run is named), but not after a failed one, a tile belongs to the kernel
// run it is made for whatever fault owner the code runs as, and dropped slabs bring a full
// collection.
import t from 'tap';
import { addInto, addTiles } from '../lib/kernel/math.js';
import { allocF32, allocTile, kernelEnded, kernelStarted, resetSlabs, slabStats, type KernelRun } from '../lib/tile/slab.js';
import { Tile } from '../lib/tile/tile.js';
import { FaultOwner } from '../lib/sync/fault-owner.js';

/** Bit patterns of a Float32Array (so -0, NaN payloads and subnormals compare exactly). */
const bits = (a: Float32Array): number[] => [...new Uint32Array(a.buffer, a.byteOffset, a.length)];

/** Deterministic awkward f32 values: specials, subnormals, huge and tiny, both signs, ties. */
function awkward(n: number, seed: number): Float32Array {
  const specials = [0, -0, Infinity, -Infinity, 1.4e-45, -1.4e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38, 16777216, 1, 0.1];
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s % 5 === 0 ? specials[s % specials.length] : (s / 2 ** 32 - 0.5) * 2 ** ((s % 60) - 30);
  }
  return out;
}

function slabTileOf(values: Float32Array): Tile {
  const tile = allocTile('f32', [values.length], values.length);
  tile.data.set(values);
  return tile;
}

t.test('the SIMD add gives the scalar add bit for bit, at every length around the vector width', async (t) => {
  for (let n = 0; n <= 37; n++) {
    const x = slabTileOf(awkward(n, n + 1));
    const y = slabTileOf(awkward(n, 1000 + n));
    const o = allocTile('f32', [n], n);
    t.ok(n === 0 || (o.slab !== null && o.slab === x.slab && x.slab === y.slab), `length ${n}: all three in one slab`);
    addTiles(x, y, o);
    const want = new Float32Array(n);
    addInto(x.data, y.data, want);
    t.same(bits(o.data), bits(want), `length ${n}`);
  }
});

t.test('NaN payloads come out the same on both paths, whichever operand carries them', async (t) => {
  const pats = [0x7fc00001, 0x7f800123, 0xffc12345, 0x7fbfffff, 0x3f800000, 0xff800000, 0x80000000, 0x00000001];
  const n = 64;
  const x = allocTile('f32', [n], n);
  const y = allocTile('f32', [n], n);
  const xb = new Uint32Array(x.data.buffer, x.data.byteOffset, n);
  const yb = new Uint32Array(y.data.buffer, y.data.byteOffset, n);
  for (let i = 0; i < n; i++) {
    xb[i] = pats[i % pats.length];
    yb[i] = pats[Math.floor(i / pats.length) % pats.length];
  }
  const o = allocTile('f32', [n], n);
  addTiles(x, y, o);
  const want = new Float32Array(n);
  addInto(x.data, y.data, want);
  t.same(bits(o.data), bits(want), 'every pair of NaN, infinity, signed zero and subnormal');
});

t.test('infinities of opposite sign give NaN on both paths', async (t) => {
  const x = slabTileOf(new Float32Array([Infinity, -Infinity, 1, 2, Infinity]));
  const y = slabTileOf(new Float32Array([-Infinity, Infinity, 3, 4, -Infinity]));
  const o = allocTile('f32', [5], 5);
  addTiles(x, y, o);
  t.ok(Number.isNaN(o.data[0]) && Number.isNaN(o.data[1]) && Number.isNaN(o.data[4]), 'SIMD lanes and the scalar tail');
  t.same([o.data[2], o.data[3]], [4, 6]);
});

t.test('the result may be written over either operand, and over chunk views at odd offsets', async (t) => {
  const x = slabTileOf(awkward(64, 7));
  const y = slabTileOf(awkward(64, 8));
  const want = new Float32Array(64);
  addInto(x.data, y.data, want);
  const x2 = slabTileOf(x.data);
  addTiles(x2, y, x2);
  t.same(bits(x2.data), bits(want), 'o is x');
  const y2 = slabTileOf(y.data);
  addTiles(x, y2, y2);
  t.same(bits(y2.data), bits(want), 'o is y');
  // Chunk views as the collectives make them: 1-element offsets, not 16-byte aligned.
  const a = slabTileOf(awkward(41, 9)).slice(3, 29);
  const b = slabTileOf(awkward(41, 10)).slice(5, 29);
  const wantAb = new Float32Array(29);
  addInto(a.data, b.data, wantAb);
  addTiles(a, b, a);
  t.same(bits(a.data), bits(wantAb), 'unaligned chunk views');
});

t.test('a result partly overlapping an operand, or tiles outside one slab, take the scalar loop', async (t) => {
  const base = slabTileOf(awkward(40, 11));
  const ref = base.data.slice();
  const y = slabTileOf(awkward(32, 12));
  // o starts one element after x: the scalar loop reads each x[i] after writing o[i - 1] over it.
  const x = base.slice(0, 32);
  const o = base.slice(1, 32);
  addTiles(x, y, o);
  const want = ref.slice();
  const wx = want.subarray(0, 32);
  addInto(wx, y.data, want.subarray(1, 33));
  t.same(bits(base.data), bits(want), 'partial overlap: index order');
  const plainX = new Tile('f32', [32], awkward(32, 13));
  const out = allocTile('f32', [32], 32);
  addTiles(plainX, y, out);
  const want2 = new Float32Array(32);
  addInto(plainX.data, y.data, want2);
  t.same(bits(out.data), bits(want2), 'an operand outside any slab');
});

t.test('slabs are recycled, zeroed, when the last kernel of an epoch ends', async (t) => {
  const e1 = kernelStarted();
  const e2 = kernelStarted();
  // 1 MB each, the largest that goes in a slab: five fill more than one.
  const tiles = [1, 2, 3, 4, 5].map(() => allocTile('f32', [250_000], 250_000));
  t.ok(tiles.every((x) => x.slab !== null), 'slab tiles');
  for (const x of tiles) x.data.fill(-1);
  const buffers = new Set(tiles.map((x) => x.data.buffer));
  t.ok(buffers.size >= 2, 'the allocations span slabs');
  kernelEnded(e1, true);
  t.ok(slabStats().top > 0, 'nothing is recycled while another kernel of the epoch runs');
  kernelEnded(e2, true);
  t.equal(slabStats().top, 0, 'the current slab starts over');
  t.ok(slabStats().kept >= 1, 'filled slabs are kept');
  const e3 = kernelStarted();
  const again = [1, 2, 3, 4, 5].map(() => allocF32(250_000));
  t.ok(again.some((x) => buffers.has(x.buffer)), 'the next epoch reuses them');
  t.ok(again.every((x) => x.every((v) => v === 0)), 'reused memory is zero');
  kernelEnded(e3, true);
});

t.test('an epoch with a failed kernel leaves its slabs to the GC', async (t) => {
  const a = kernelStarted();
  const first = allocTile('f32', [16], 16);
  kernelEnded(a, true);
  const b = kernelStarted();
  const reused = allocTile('f32', [16], 16);
  t.equal(reused.data.buffer, first.data.buffer, 'a clean epoch hands the same slab on');
  reused.data.fill(5);
  const c = kernelStarted();
  kernelEnded(c, false);
  kernelEnded(b, true);
  const d = kernelStarted();
  const after = allocTile('f32', [16], 16);
  t.not(after.data.buffer, reused.data.buffer, 'the failed epoch\'s slab is not handed out again');
  t.same([...after.data], new Array(16).fill(0));
  t.same([...reused.data], new Array(16).fill(5), 'and its contents were left alone');
  kernelEnded(d, true);
});

t.test('a kernel that never ends does not hold the epoch open past resetSlabs (a new session)', async (t) => {
  const hung = kernelStarted();
  const held = allocTile('f32', [16], 16);
  held.data.fill(3);
  resetSlabs();
  t.same(slabStats(), { ...slabStats(), top: 0 }, 'nothing handed out in the new generation');
  const k = kernelStarted();
  const fresh = allocTile('f32', [16], 16);
  t.not(fresh.data.buffer, held.data.buffer, 'the hung kernel\'s slab is not reused');
  kernelEnded(k, true);
  t.equal(slabStats().top, 0, 'the new epoch ended and recycled, though the old kernel never ended');
  kernelEnded(hung, true); // late: ignored
  t.equal(slabStats().top, 0);
  const again = allocTile('f32', [16], 16);
  t.same([...held.data], new Array(16).fill(3), 'the hung kernel\'s tile was never handed out again');
  t.same([...again.data], new Array(16).fill(0));
});

/** A kernel for the slab bookkeeping: its run (once started), and tiles made for it, as its tl makes them. */
function kernelRun(): { start: () => KernelRun; alloc: (n: number) => Promise<Tile> } {
  let run: KernelRun | undefined;
  return { start: () => (run = kernelStarted()), alloc: async (n) => allocTile('f32', [n], n, run) };
}

/**
 * A running kernel that took every kept slab and filled the current one: the next 1 MB tile
 * opens a fresh slab, and the thread has room to keep the first slab released.
 */
async function holder(): Promise<KernelRun> {
  const z = kernelRun();
  const k = z.start();
  while (slabStats().kept > 0 || slabStats().top + 1_000_000 <= 4 * 1024 * 1024) await z.alloc(250_000);
  return k;
}

t.test('a slab is recycled once the kernels with tiles in it ended, while another kernel of the epoch still runs', async (t) => {
  const a = kernelRun();
  const b = kernelRun();
  const c = kernelRun();
  const kz = await holder();
  const ka = a.start();
  const kb = b.start();
  // 1 MB tiles, four to a slab: a fills one slab and starts a second, which b shares.
  const aTiles: Tile[] = [];
  for (let i = 0; i < 5; i++) aTiles.push(await a.alloc(250_000));
  for (const x of aTiles) x.data.fill(-1);
  const bTile = await b.alloc(16);
  bTile.data.fill(7);
  const first = aTiles[0].data.buffer;
  t.equal(aTiles[3].data.buffer, first, 'four tiles fill the first slab');
  t.equal(bTile.data.buffer, aTiles[4].data.buffer, 'b shares the second');
  const early = slabStats().early;
  kernelEnded(ka, true);
  t.equal(slabStats().early, early + 1, 'a\'s own slab is recycled while b runs');
  const kc = c.start();
  const cTiles: Tile[] = [];
  for (let i = 0; i < 4; i++) cTiles.push(await c.alloc(250_000));
  t.equal(cTiles[3].data.buffer, first, 'the next slab c needs is a\'s, handed out again');
  t.ok(cTiles[3].data.every((v) => v === 0), 'zeroed');
  t.same([...bTile.data], new Array(16).fill(7), 'the shared slab was left alone: b still has tiles there');
  kernelEnded(kb, true);
  kernelEnded(kc, true);
  kernelEnded(kz, true);
});

t.test('a failed kernel\'s slab goes to the GC though others of the epoch still run', async (t) => {
  const a = kernelRun();
  const b = kernelRun();
  const c = kernelRun();
  const kz = await holder();
  const ka = a.start();
  const kb = b.start();
  const aTiles: Tile[] = [];
  for (let i = 0; i < 5; i++) aTiles.push(await a.alloc(250_000));
  aTiles[0].data.fill(5);
  await b.alloc(250_000);
  const early = slabStats().early;
  kernelEnded(ka, false);
  t.equal(slabStats().early, early + 1, 'released');
  const kc = c.start();
  const cTiles: Tile[] = [];
  for (let i = 0; i < 4; i++) cTiles.push(await c.alloc(250_000));
  t.ok(cTiles.every((x) => x.data.buffer !== aTiles[0].data.buffer), 'but not handed out again');
  t.same([...aTiles[0].data.subarray(0, 4)], [5, 5, 5, 5], 'and its contents were left alone');
  kernelEnded(kb, true);
  kernelEnded(kc, true);
  kernelEnded(kz, true);
});

t.test('a tile belongs to the kernel run it is made for, whatever fault owner the code runs as', async (t) => {
  const kz = await holder();
  const a = kernelRun();
  const b = kernelRun();
  const ka = a.start();
  const kb = b.start();
  // a's tiles are made while the code runs as another owner (a rank's host code, say):
  // the run names them, not the owner, so a's slab is recycled when a ends while b runs.
  const other = new FaultOwner('not a kernel', () => 0);
  const aTiles: Tile[] = [];
  for (let i = 0; i < 4; i++) aTiles.push(await other.run(() => a.alloc(250_000)));
  await b.alloc(250_000);
  t.not(aTiles[0].data.buffer, (await b.alloc(16)).data.buffer, 'a filled a slab of its own');
  const early = slabStats().early;
  kernelEnded(ka, true);
  t.equal(slabStats().early, early + 1, 'a\'s slab is recycled while b still runs');
  kernelEnded(kb, true);
  kernelEnded(kz, true);
});

t.test('slabs left to the GC bring a full collection every 16 MiB', async (t) => {
  const g = globalThis as { gc?: unknown };
  const had = g.gc;
  let calls = 0;
  g.gc = () => calls++;
  try {
    const a = kernelRun();
    const ka = a.start();
    const before = slabStats().collections;
    // 40 tiles of 1 MB: ten slabs; at most two are kept, the other eight (32 MiB) dropped.
    for (let i = 0; i < 40; i++) await a.alloc(250_000);
    kernelEnded(ka, true);
    t.ok(calls >= 2, 'one collection per 16 MiB dropped (32-40 MiB here)');
    t.equal(slabStats().collections - before, calls);
  } finally {
    g.gc = had;
  }
});

t.test('slices of slab tiles view the same memory and refuse ranges outside the tile', async (t) => {
  const whole = slabTileOf(awkward(20, 21));
  const part = whole.slice(4, 8);
  t.equal(part.slab, whole.slab);
  t.equal(part.at, whole.at + 16);
  part.data[0] = 1234;
  t.equal(whole.data[4], 1234, 'a view, not a copy');
  t.same(Array.from(whole.slice(19, 1).data), [whole.data[19]]);
  t.throws(() => whole.slice(18, 3), { code: 'ERR_INDEX_OUT_OF_RANGE' });
  t.throws(() => whole.slice(-1, 2), { code: 'ERR_INDEX_OUT_OF_RANGE' });
  t.throws(() => new Tile('f32', [2, 3], new Float32Array(5)), { code: 'ERR_VALUE_COUNT_MISMATCH' }, 'a tile of 6 elements from 5 values');
  const plain = new Tile('f32', [6], new Float32Array([1, 2, 3, 4, 5, 6]));
  t.same(Array.from(plain.slice(2, 3).data), [3, 4, 5]);
  t.equal(plain.slice(2, 3).slab, null);
});

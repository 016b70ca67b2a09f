// The cache lines a step of a ring collective touches in the shared buffers (issue 26
// item 5, decision 0185): one message on every PE's east ring, each at the same
// sequence number, touches that ring's words in `ctl` and its slot's header in the
// channel set's buffer. Packed (at least four PEs a thread), four PEs' ring words
// share a line and, with no payload inline (timing-only mode), two PEs' headers do;
// with a thread a PE, every ring and header keeps lines of its own. Whatever the
// packing, no two rings' words and no two slots' headers overlap.
import t from 'tap';
import { DIR_COUNT, FLOW, RING, RING_WORDS, SLOT, ShmLayout, type LayoutDims } from '../lib/shm/layout.js';

const EAST = 0;

function layout(pes: number, executors: number, slotSize: number, channelSets = 1): ShmLayout {
  const dims: LayoutDims = { executors, pes, hosts: pes + 1, nSlots: 8, slotSize, cubes: pes, arenaBytes: 0, channelSets };
  return new ShmLayout(dims);
}

/** Distinct 64-byte lines of `ctl` (ring words) and of the set's buffer (slot headers) that message `seq` on every PE's east ring touches. */
function stepLines(L: ShmLayout, seq: number): { ring: number; header: number } {
  const ring = new Set<number>();
  const header = new Set<number>();
  for (let pe = 0; pe < L.dims.pes; pe++) {
    const r = L.ringOf(pe, EAST, 0);
    for (const f of Object.values(RING)) ring.add(L.ring(r, f) >>> 4);
    const at = L.slotOffset(r, seq);
    for (let b = at; b < at + SLOT.HEADER_BYTES; b += 4) header.add(b >>> 6);
  }
  return { ring: ring.size, header: header.size };
}

t.test('a step of a timing-only ring touches a quarter of a line of ring words and half a line of headers a PE, packed', async (t) => {
  for (const pes of [256, 1024]) {
    const L = layout(pes, 1, 0);
    t.ok(L.packed, `p = ${pes} on one thread is packed`);
    for (const seq of [0, 5, 13]) t.same(stepLines(L, seq), { ring: pes / 4, header: pes / 2 }, `p = ${pes}, message ${seq}`);
  }
  // Two threads of 512 PEs each: still packed.
  t.same(stepLines(layout(1024, 2, 0), 3), { ring: 256, header: 512 });
});

t.test('with a thread a PE, each ring and each header has its lines to itself', async (t) => {
  const L = layout(64, 64, 0);
  t.notOk(L.packed);
  t.same(stepLines(L, 2), { ring: 64, header: 64 });
  // With data, a header and its inline payload take whole lines whatever the packing.
  t.same(stepLines(layout(64, 1, 64 * 1024), 2), { ring: 16, header: 64 });
});

t.test("no two rings' words and no two slots' headers overlap, packed or not, in every channel set", async (t) => {
  for (const [pes, executors, slotSize] of [
    [6, 1, 0],
    [6, 6, 0],
    [8, 2, 0],
    [8, 1, 64 * 1024],
    [5, 5, 1024],
  ]) {
    const L = layout(pes, executors, slotSize, 2);
    const words = new Set<number>();
    for (let r = 0; r < L.rings; r++) for (let f = 0; f < RING_WORDS; f++) words.add(L.ring(r, f));
    t.equal(words.size, L.rings * RING_WORDS, `p = ${pes}, ${executors} threads: ring words distinct`);
    t.ok(Math.max(...words) < L.ctlWords, 'ring words inside ctl');
    const slots = new Set<number>();
    let misaligned = 0;
    for (let r = 0; r < L.ringsPerSet; r++) {
      for (let s = 0; s < L.dims.nSlots; s++) {
        const at = L.slotOffset(r, s);
        if (at % L.slotStride !== 0) misaligned++;
        slots.add(at / L.slotStride);
      }
    }
    t.equal(misaligned, 0, 'every header at a multiple of the stride');
    t.equal(slots.size, L.ringsPerSet * L.dims.nSlots, `p = ${pes}, ${executors} threads: slots distinct`);
    t.ok((Math.max(...slots) + 1) * L.slotStride <= L.payloadBase, 'headers before the payload region');
    t.equal(L.slotOffset(L.ringOf(1, EAST, 1), 3), L.slotOffset(L.ringOf(1, EAST, 0), 3), 'a set has its own buffer: same offsets');
    t.equal(DIR_COUNT * pes * L.dims.nSlots * L.slotStride, L.payloadBase);
  }
});

/** Distinct 64-byte lines of `times` that the arrivals of PE `pe`'s four outbound channels take (a piece's check reads all four of each PE near its links: lib/sync/link-reach.ts peFloor). */
function arrivalLines(L: ShmLayout, pe: number): number {
  const lines = new Set<number>();
  for (let d = 0; d < DIR_COUNT; d++) lines.add(L.flow(pe, d, FLOW.ARRIVAL_PS) >>> 3);
  return lines.size;
}

t.test("a PE's floor reads one line of arrivals, not one a direction (decision 0236)", async (t) => {
  for (const [pes, executors] of [
    [8, 1],
    [256, 1],
    [1024, 2],
    [64, 64],
  ]) {
    const L = layout(pes, executors, 0);
    let lines = 0;
    for (let pe = 0; pe < pes; pe++) lines += arrivalLines(L, pe);
    t.equal(lines, pes, `p = ${pes}, ${executors} threads: one line a PE`);
    const words = new Set<number>();
    for (let pe = 0; pe < pes; pe++) for (let d = 0; d < DIR_COUNT; d++) for (let f = 0; f < FLOW.WIDTH; f++) words.add(L.flow(pe, d, f));
    t.equal(words.size, pes * DIR_COUNT * FLOW.WIDTH, 'flow words distinct');
    t.ok(Math.max(...words) < L.timesWords, 'flow words inside times');
    t.ok(Math.min(...words) > L.clock(L.actors - 1), 'after the clocks');
  }
});

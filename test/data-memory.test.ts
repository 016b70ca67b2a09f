// The memory a ring all-reduce with data touches besides its tensor (issue 14, item 3;
// decision 0034): its loaded shard is the tensor's own bytes, not a copy in a tile
// slab, its small messages are written beside the IPCQ slot headers, not each on a
// page of its own (with the headers of one direction together), its kernels' records of
// every PE lie together, and the ranks of a thread share their world's rank list. Measured
// as deterministic counts (slab bytes carved, IPCQ pages holding a non-zero byte) and
// identities, never as RSS.
import t from 'tap';
import { ProcessGroup } from '../lib/ccl/process-group.js';
import { ringView } from '../lib/ipcq/ring.js';
import { RECORD, SLOT, ShmLayout } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { TestRuntime } from './helpers/run.js';
import { SLAB_PROBE, slabBytesOfAllReduce } from './fixtures/slab-probe.js';

const rt = new TestRuntime({ modules: [SLAB_PROBE] });
t.teardown(() => rt.close());

const PAGE = 4096;

/** Pages of `buf` holding at least one non-zero byte: the least a run wrote there. */
function pagesWritten(buf: SharedArrayBuffer): number {
  const words = new Int32Array(buf, 0, Math.floor(buf.byteLength / 4));
  let pages = 0;
  for (let page = 0; page * PAGE < buf.byteLength; page++) {
    const from = (page * PAGE) / 4;
    const to = Math.min(words.length, from + PAGE / 4);
    for (let i = from; i < to; i++) {
      if (words[i] !== 0) {
        pages++;
        break;
      }
    }
  }
  return pages;
}

t.test('a ring all-reduce with data carves less tile slab memory than one shard per rank: it reduces in the shard itself', async (t) => {
  const n = 4096; // f32: 16 KiB per rank, 4 chunks of 4 KiB
  // One thread per rank, so each rank's count is its own kernel's. Links not shared: a piece
  // held for its links (decision 0170) would add its send's snapshot, as often as wall time says.
  const r = await rt.session({ topology: 'ideal', sets: ['system.sips.count=4', 'timing.link_sharing=none'], threads: 'rank' }, (torch) => torch.multiprocessing.spawn(slabBytesOfAllReduce, { args: [n], nprocs: 4 }));
  for (const [rank, bytes] of r.value.entries()) t.ok(bytes < n * 4, `rank ${rank}: ${bytes} slab bytes, less than its ${n * 4}-byte shard`);
});

t.test('a ring all-reduce of 64-byte messages writes only the pages of its east rings\' slot headers, not a page per slot', async (t) => {
  const p = 8;
  const n = 16 * p; // chunks of 16 f32: 64-byte messages, through 8 slots of 64 KiB per ring on the ideal topology
  const r = await rt.session({ topology: 'ideal', sets: [`system.sips.count=${p}`], threads: 1 }, async (torch) => {
    await torch.multiprocessing.spawn(slabBytesOfAllReduce, { args: [n], nprocs: p });
    const { buffers, layout } = torch.host.env.shared;
    return { pages: buffers.ipcq.map(pagesWritten), slots: layout.dims.nSlots, slotSize: layout.dims.slotSize, slotStride: layout.slotStride };
  });
  const { slots, slotSize, slotStride } = r.value;
  t.ok(slotSize >= PAGE && slots > 1, 'slots of a page or more, several per ring');
  t.ok(SLOT.HEADER_BYTES + 64 <= slotStride, 'a 64-byte payload fits beside its header');
  // Each PE sends east only, on the world's channel set (0): the east rings' headers (with
  // the payloads) lie together; the other sets carry nothing.
  const east = Math.ceil((p * slots * slotStride) / PAGE);
  t.same(r.value.pages, r.value.pages.map((_, set) => (set === 0 ? east : 0)), `${east} pages (${p * slots} if each slot took its own)`);
});

t.test('the first kernel of every PE records its times in one run of rows, not a row a page apart per PE', (t) => {
  const pes = 1024;
  const L = new ShmLayout({ executors: 1, pes, hosts: 2, nSlots: 8, slotSize: 0, cubes: pes, arenaBytes: 0 });
  const rows = Array.from({ length: pes }, (_, pe) => L.record(pe, 0, RECORD.START_PS));
  const span = (Math.max(...rows) - Math.min(...rows) + RECORD.WIDTH) * 8;
  t.equal(span, pes * RECORD.WIDTH * 8, `${pes} rows of ${RECORD.WIDTH} f64 words, side by side`);
  t.end();
});

t.test('the world groups of a thread share one frozen rank list; a smaller group has its own', (t) => {
  const a = new ProcessGroup([0, 1, 2, 3], 4);
  const b = new ProcessGroup([3, 1, 0, 2], 4);
  t.equal(a.ranks, b.ranks, 'one list for every group of all 4 ranks');
  t.same(a.ranks, [0, 1, 2, 3]);
  t.ok(Object.isFrozen(a.ranks));
  const sub = new ProcessGroup([2, 0], 4);
  t.same(sub.ranks, [0, 2]);
  t.not(new ProcessGroup([0, 1, 2, 3, 4], 5).ranks, a.ranks, 'another world size, another list');
  t.end();
});

t.test('the sender and the receiver of a ring on one thread share its view; another session has its own', (t) => {
  const dims = { executors: 1, pes: 4, hosts: 5, nSlots: 8, slotSize: 256, cubes: 4, arenaBytes: 0 };
  const a = SharedState.create(dims);
  t.equal(ringView(a, 5), ringView(a, 5));
  t.not(ringView(a, 5), ringView(a, 6));
  t.not(ringView(SharedState.create(dims), 5), ringView(a, 5));
  t.end();
});

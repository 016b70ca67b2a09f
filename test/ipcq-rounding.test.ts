// Rounding of IPCQ serialisation (issue 14, item 4): a payload of S bytes cut
// into pieces is serialised in round(S / beta) ps, rounded once, not once per
// piece. At 450 GB/s a byte takes 2.222... ps, so rounding each 1 KiB piece on
// its own (2275.56 -> 2276 ps) gained 0.44 ps a piece, and the error grew with
// the piece count. The ring all-reduce is then within 0.5 ps per step of
// 2(p-1)(alpha + N/(p beta)), however finely its chunks are cut.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

const P = 4;
const ALPHA_NS = 10;
const BETA = 450; // GB/s = bytes per ns: 1000 / 450 ps per byte is not a whole number
const N_ELEM = 65536; // f32: N = 256 KiB per rank, chunks of 64 KiB
/** The machine: ideal timing, p = 4, alpha 10 ns, beta 450 GB/s; the window (n_slots - 1) * piece >= 2 alpha beta + 16 = 9016 B. */
const MACHINE = [`system.sips.count=${P}`, `timing.links.sip_sip.bandwidth_gb_s=${BETA}`, `timing.links.sip_sip.latency_ns=${ALPHA_NS}`, `ccl.n_elem=${N_ELEM}`];
const PIECES_1K = ['ccl.slot_size=1024', 'ccl.vc_chunk_size=1024', 'ccl.n_slots=16'];
const PIECES_64K = ['ccl.slot_size=65536', 'ccl.vc_chunk_size=65536', 'ccl.n_slots=8'];

async function critNs(sets: string[]): Promise<number> {
  const [r] = await rt.bench('ccl_allreduce', { topology: 'ideal_ring_1d_6', dtype: 'f32', threads: 1, sets: [...MACHINE, ...sets] });
  if (!r.ok) throw new Error(r.lines.join(' | '));
  return r.critNs;
}

t.test('at 450 GB/s a ring all-reduce in 1 KiB pieces is within 0.5 ps per step of 2(p-1)(alpha + N/(p beta))', async (t) => {
  const N = N_ELEM * 4;
  const lawPs = 2 * (P - 1) * (ALPHA_NS * 1000 + (N * 1000) / (P * BETA));
  const gotPs = (await critNs(PIECES_1K)) * 1000;
  t.ok(Math.abs(gotPs - lawPs) <= (2 * (P - 1)) / 2 + 1e-6, `crit ${gotPs} ps vs law ${lawPs} ps`);
});

t.test('at 450 GB/s 64 pieces of 1 KiB per chunk take exactly as long as one piece of 64 KiB', async (t) => {
  t.equal(await critNs(PIECES_1K), await critNs(PIECES_64K));
});

// The alpha-beta law (issue 2, item 17): on the ideal topology (one link
// class, zero overheads) ring all-reduce of N bytes per rank over p ranks
// takes 2(p - 1)(alpha + N / (p beta)), within the clock's rounding (each
// step's cost is rounded to 1 ps once, so the sum is within 2(p - 1) ps).
// The ring is the whole ideal machine (p SIPs, so every hop is one link), and
// the IPCQ window covers the bandwidth-delay product, so credits never throttle
// (backpressure.test.ts covers the case where they do).
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

const ideal = loadTopology(topologyPath('ideal'));
const alphaNs = ideal.timing.links.sip_sip.latency_ns;
const betaGBs = ideal.timing.links.sip_sip.bandwidth_gb_s;

const WIDE = ['ccl.slot_size=65536', 'ccl.vc_chunk_size=65536', 'ccl.n_slots=8'];

for (const p of [2, 4, 8]) {
  for (const nElem of [64, 16384]) {
    const bytes = nElem * 4;
    t.test(`p=${p}, N=${bytes} B: crit_ns = 2(p-1)(alpha + N/(p beta))`, async (t) => {
      const [r] = await rt.bench('ccl_allreduce', { topology: 'ideal', dtype: 'f32', threads: 1, sets: [`system.sips.count=${p}`, `ccl.n_elem=${nElem}`, ...WIDE] });
      t.ok(r.ok, r.lines.join(' | '));
      const expectedNs = 2 * (p - 1) * (alphaNs + bytes / (p * betaGBs));
      t.ok(Math.abs(r.critNs - expectedNs) <= (2 * (p - 1)) / 1000, `crit ${r.critNs} ns vs law ${expectedNs} ns`);
    });
  }
}

t.test('the law holds whatever the piece size (cut-through pieces do not add alpha)', async (t) => {
  const [a] = await rt.bench('ccl_allreduce', { topology: 'ideal', dtype: 'f32', threads: 1, sets: ['system.sips.count=4', 'ccl.n_elem=16384', ...WIDE] });
  const [b] = await rt.bench('ccl_allreduce', { topology: 'ideal', dtype: 'f32', threads: 1, sets: ['system.sips.count=4', 'ccl.n_elem=16384', 'ccl.slot_size=256', 'ccl.vc_chunk_size=256', 'ccl.n_slots=256'] });
  t.ok(a.ok && b.ok);
  t.equal(a.critNs, b.critNs, '16 KiB chunks in one piece or in 64 pieces of 256 B');
});

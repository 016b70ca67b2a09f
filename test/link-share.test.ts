// Runs on: main thread (tap). Covers: the fluid link-sharing engine
// (lib/topology/link-share.ts): a flow alone pays exactly today's
// transferPs, equal flows share a link equally, penalties weight the shares, a flow joining midway, max-min
// over links of different load, the latency phase takes no bandwidth, ties in
// id order, the conservative contract, the same results however the calls are
// cut, and agreement with a brute-force small-step simulation.
import t from 'tap';
import { prng } from './helpers/prng.js';
import { aloneArrival, joinOf, LinkShare, type Flow, type FlowDone } from '../lib/topology/link-share.js';
import { transferPs } from '../lib/time/virtual-time.js';


const flow = (id: number, startPs: number, bytes: number, route: number[], latencyPs = 0): Flow => ({ id, startPs, bytes, route, latencyPs });

/** Every flow's arrival, all flows known up front. */
function runAll(caps: number[], flows: Flow[]): FlowDone[] {
  const s = new LinkShare(caps);
  for (const f of [...flows].sort((x, y) => x.startPs - y.startPs || x.id - y.id)) s.add(f);
  return s.advanceTo(Infinity);
}

const byId = (d: FlowDone[]): Record<number, number> => Object.fromEntries(d.map((x) => [x.id, x.arrivalPs]));

t.test('a flow alone arrives at start + latency + its serialisation rounded up to the ps', async (t) => {
  const r = prng(1);
  let bad = 0;
  for (let i = 0; i < 2000; i++) {
    const bw = [100, 200, 256, 1000, 3 + r() * 500][i % 5];
    const bytes = 1 + Math.floor(r() * (1 << 21));
    const start = Math.floor(r() * 1e9), lat = Math.floor(r() * 1e7);
    const [d] = runAll([bw], [flow(7, start, bytes, [0], lat)]);
    const serial = Math.ceil((bytes * 1000) / bw - 1e-6);
    if (d.arrivalPs !== start + lat + serial || d.sentPs !== start + serial) bad++;
  }
  t.equal(bad, 0);
});

t.test('a flow alone given as a whole number of ps times the bandwidth (as the link arbiter feeds it) takes exactly that many ps', async (t) => {
  const r = prng(2);
  let bad = 0;
  for (let i = 0; i < 2000; i++) {
    const bw = [100, 200, 256, 450, 3 + r() * 500][i % 5];
    // A piece's share of a payload's rounded serialisation (lib/ipcq/channel.ts), as the arbiter feeds it.
    const serial = transferPs(1 + Math.floor(r() * (1 << 21)), bw);
    const start = Math.floor(r() * 1e9);
    const [d] = runAll([bw], [flow(7, start, (serial * bw) / 1000, [0])]);
    if (d.sentPs !== start + serial) bad++;
  }
  t.equal(bad, 0);
});

t.test('a flow alone is as exact when the arbiter advances in many small steps', async (t) => {
  const s = new LinkShare([200]);
  s.add(flow(0, 1000, 65536 * 3 + 17, [0], 700000));
  const got: FlowDone[] = [];
  for (let safe = 0; got.length === 0; safe += 997) got.push(...s.advanceTo(safe));
  t.equal(got[0].arrivalPs, 1000 + 700000 + transferPs(65536 * 3 + 17, 200));
});

t.test('two equal flows on one link take twice as long', async (t) => {
  const d = runAll([100], [flow(0, 0, 65536, [0], 1000), flow(1, 0, 65536, [0], 1000)]);
  const twice = Math.round((2 * 65536 * 1000) / 100);
  t.same(d, [
    { id: 0, arrivalPs: 1000 + twice, sentPs: twice },
    { id: 1, arrivalPs: 1000 + twice, sentPs: twice },
  ]);
});

t.test('a flow joining midway halves the first one from then on', async (t) => {
  // 1 GB/s = 1 byte/ns. A: 1000 B from 0; B: 1000 B from 500 ns. A sends 500 B alone,
  // then both share: A's other 500 B take 1000 ns (ends 1500 ns); B has 500 B left then, alone.
  t.same(byId(runAll([1], [flow(0, 0, 1000, [0]), flow(1, 500_000, 1000, [0])])), { 0: 1_500_000, 1: 2_000_000 });
});

t.test('max-min: a flow on two links gets the share of its tighter link, the rest goes to the others', async (t) => {
  // link 0: 2 GB/s, link 1: 1 GB/s. A on [0, 1], B on [0], C on [1].
  // Link 1 is the bottleneck (1/2 each for A and C); B gets 2 - 1/2 = 1.5 until 2000 ns
  // (3000 B sent), then the whole 2 GB/s for its last 1500 B (750 ns).
  t.same(byId(runAll([2, 1], [flow(0, 0, 1000, [0, 1]), flow(1, 0, 4500, [0]), flow(2, 0, 1000, [1])])), { 0: 2_000_000, 1: 2_750_000, 2: 2_000_000 });
});

t.test('the latency phase takes no bandwidth (SimGrid CM02)', async (t) => {
  // X alone on the link for 1000 ns; Y starts at 0 but pays 1000 ns of latency first.
  t.same(byId(runAll([1], [flow(0, 0, 1000, [0]), flow(1, 0, 1000, [0], 1_000_000)])), { 0: 1_000_000, 1: 2_000_000 });
});

t.test('flows that arrive at the same time come back in id order; empty routes and empty flows pay only latency', async (t) => {
  const d = runAll([1, 1], [flow(5, 0, 100, [0]), flow(3, 0, 100, [1]), flow(4, 0, 100, []), flow(9, 0, 0, [0], 50)]);
  t.same(d.map((x) => [x.id, x.arrivalPs]), [[4, 0], [9, 50], [3, 100_000], [5, 100_000]]);
});

t.test('advanceTo returns only final flows, and a flow may not start before the safe time', async (t) => {
  const s = new LinkShare([1]);
  s.add(flow(0, 0, 1000, [0]));
  t.same(s.advanceTo(999_999), []);
  t.same(s.advanceTo(1_000_000).map((x) => x.arrivalPs), [1_000_000]);
  t.throws(() => s.add(flow(1, 999_999, 10, [0])), { code: 'ERR_INTERNAL' });
  const u = new LinkShare([1]);
  u.add(flow(2, 5, 1, [0]));
  u.add(flow(1, 5, 1, [0]));
  const v = new LinkShare([1]);
  v.add(flow(1, 5, 1, [0]));
  v.add(flow(2, 5, 1, [0]));
  t.same(u.advanceTo(Infinity), v.advanceTo(Infinity), 'flows of one instant are taken in id order, whatever order they came in');
});

t.test('advanceTo with firstEnd stops at the first instant a flow ends, and that instant becomes the safe time', async (t) => {
  const s = new LinkShare([1]);
  s.add(flow(0, 0, 1000, [0]));
  s.add(flow(1, 0, 3000, [0]));
  // Both at 0.5 B/ns until flow 0 ends at 2 us; flow 1 then alone: 2000 B left at 1 B/ns.
  t.same(s.advanceTo(Infinity, true).map((x) => [x.id, x.arrivalPs]), [[0, 2_000_000]]);
  t.throws(() => s.add(flow(2, 1_999_999, 10, [0])), { code: 'ERR_INTERNAL' }, 'a flow joining before the safe time');
  s.add(flow(3, 2_000_000, 1000, [0]));
  // From 2 us flows 1 and 3 share: 3 ends at 4 us, then 1 has 1000 B left alone.
  t.same(s.advanceTo(Infinity).map((x) => [x.id, x.arrivalPs]), [[3, 4_000_000], [1, 5_000_000]]);
});

/** A random instance: a few links, a few flows on random routes. */
function instance(seed: number): { caps: number[]; flows: Flow[] } {
  const r = prng(seed);
  const nLinks = 2 + Math.floor(r() * 4);
  const caps = Array.from({ length: nLinks }, () => 1 + Math.floor(r() * 4));
  const flows: Flow[] = [];
  const n = 2 + Math.floor(r() * 6);
  for (let id = 0; id < n; id++) {
    const route = [...new Set(Array.from({ length: 1 + Math.floor(r() * 3) }, () => Math.floor(r() * nLinks)))];
    flows.push(flow(id, Math.floor(r() * 4) * 500_000, 200 + Math.floor(r() * 3000), route, Math.floor(r() * 3) * 300_000));
  }
  return { caps, flows };
}

t.test('the results depend on the flows only, not on how adds and advances are interleaved', async (t) => {
  let bad = 0;
  for (let seed = 1; seed <= 200; seed++) {
    const { caps, flows } = instance(seed);
    const all = runAll(caps, flows);
    const sorted = [...flows].sort((x, y) => x.startPs - y.startPs || x.id - y.id);
    const s = new LinkShare(caps);
    const got: FlowDone[] = [];
    const step = 1 + Math.floor(prng(seed + 1000)() * 400_000);
    let i = 0;
    for (let safe = 0; got.length < flows.length; safe += step) {
      while (i < sorted.length && sorted[i].startPs < safe + step) s.add(sorted[i++]);
      got.push(...s.advanceTo(i < sorted.length ? sorted[i].startPs : safe + step));
    }
    if (JSON.stringify(got) !== JSON.stringify(all)) bad++;
  }
  t.equal(bad, 0);
});

/**
 * Brute force: 1 ns steps; when the set of flows in their bandwidth phase
 * changes, rates by naive water-filling (every unfixed flow + eps until a link
 * cannot take eps more per unfixed flow). Returns arrival times in ns.
 */
function bruteForce(caps: number[], flows: Flow[]): Record<number, number> {
  const eps = 1e-4;
  const rem = new Map(flows.map((f) => [f.id, f.bytes]));
  const out: Record<number, number> = {};
  let rates = new Map<number, number>();
  let activeKey = '';
  for (let t = 0; Object.keys(out).length < flows.length; t++) {
    const active = flows.filter((f) => t * 1000 >= f.startPs + f.latencyPs && !(f.id in out));
    const key = active.map((f) => f.id).join();
    if (key !== activeKey) {
      activeKey = key;
      rates = new Map(active.map((f) => [f.id, 0]));
      const fixed = new Set<number>();
      while (fixed.size < active.length) {
        const load = caps.map(() => 0), unfixed = caps.map(() => 0);
        for (const f of active) for (const l of f.route) {
          load[l] += rates.get(f.id) as number;
          if (!fixed.has(f.id)) unfixed[l]++;
        }
        for (const f of active) {
          if (fixed.has(f.id)) continue;
          if (f.route.some((l) => load[l] + eps * unfixed[l] > caps[l] + 1e-12)) fixed.add(f.id);
        }
        for (const f of active) if (!fixed.has(f.id)) rates.set(f.id, (rates.get(f.id) as number) + eps);
      }
    }
    for (const f of active) {
      const left = (rem.get(f.id) as number) - (rates.get(f.id) as number);
      rem.set(f.id, left);
      if (left <= 0) out[f.id] = t + 1 + left / (rates.get(f.id) as number);
    }
  }
  return out;
}

t.test('agrees with a brute-force small-step simulation on random instances', async (t) => {
  let worst = 0;
  for (let seed = 1; seed <= 40; seed++) {
    const { caps, flows } = instance(seed);
    const got = byId(runAll(caps, flows));
    const want = bruteForce(caps, flows);
    for (const f of flows) worst = Math.max(worst, Math.abs(got[f.id] / 1000 - want[f.id]) / want[f.id]);
  }
  // The brute force is off by its step (1 ns) and eps-sized rate errors: well under 1 %.
  t.ok(worst < 0.01, `worst relative difference ${worst}`);
});

t.test('flows share a link in proportion to 1 / penalty (CM02 gives the route latency): 1 and 2 get two thirds and one third', async (t) => {
  const s = new LinkShare([3]);
  s.add({ ...flow(0, 0, 3000, [0]), penalty: 1 });
  s.add({ ...flow(1, 0, 3000, [0]), penalty: 2 });
  // 2 B/ns and 1 B/ns: flow 0 ends at 1.5 us; flow 1 then has 1500 B left alone at 3 B/ns, 0.5 us more.
  t.same(s.advanceTo(Infinity).map((x) => [x.id, x.arrivalPs]), [[0, 1_500_000], [1, 2_000_000]]);
});

t.test('a flow alone on its links reports its alone time (aloneArrival) to the ps, whatever flows on other links do meanwhile', async (t) => {
  // The channel's own path (lib/ipcq/link-timing.ts, a piece proved alone) computes a lone piece's times without
  // the model; the model must give exactly the same, however many events happen elsewhere.
  const r = prng(9);
  let bad = 0;
  let cases = 0;
  for (let i = 0; i < 300; i++) {
    const caps = [100 + r() * 400, 450, 200, 256];
    const s = new LinkShare(caps);
    const serial = transferPs(1 + Math.floor(r() * (1 << 20)), caps[0]);
    const start = Math.floor(r() * 1e7) + r();
    const lat = Math.floor(r() * 1e5);
    const lone: Flow = { id: 0, startPs: start, bytes: (serial * caps[0]) / 1000, alonePs: serial, route: [0], latencyPs: lat };
    // Busy flows on links 1..3 that join and leave, sharing among themselves, while the lone one runs.
    const others: Flow[] = [];
    for (let k = 1; k <= 40; k++) others.push({ id: k, startPs: start + r() * serial, bytes: 1 + r() * 50000, route: [1 + (k % 3)], latencyPs: Math.floor(r() * 1000), penalty: 1 + Math.floor(r() * 3) });
    const all = [lone, ...others].sort((x, y) => x.startPs + x.latencyPs - (y.startPs + y.latencyPs) || x.id - y.id);
    for (const f of all) s.add(f);
    const done = s.advanceTo(Infinity);
    const got = done.find((d) => d.id === 0) as FlowDone;
    const want = aloneArrival(joinOf(start, lat), serial);
    cases++;
    if (got.arrivalPs !== want.arrivalPs || got.sentPs !== want.arrivalPs - lat) bad++;
  }
  t.equal(bad, 0, `${cases} cases`);
});

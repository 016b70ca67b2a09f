// Runs on: main thread (tap). Covers: the optimistic fast path's overlap check by
// intervals (lib/ipcq/link-overlap.ts, decision 0075): a piece that lies wholly before
// a flow recorded earlier on its link met nobody, whatever order the two were recorded
// in; a piece that overlaps one trips the check; with more intervals than a link keeps,
// merging never hides a meeting, and with no more than that the answer is exact. And
// end to end: a user's program whose 1-hop flow leaves before its 3-hop flow enters runs
// once, on one thread, with the arbitrated run's times.
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { LinkOverlap, recordInterval } from '../lib/ipcq/link-overlap.js';
import { ABORT_KIND, HEADER, LINK_INTERVALS, LINK_SPAN } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { Links } from '../lib/topology/links.js';
import { Machine } from '../lib/topology/machine.js';
import { worker } from '../benches/late_meeting.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [new URL('../benches/late_meeting.js', import.meta.url).href] });
t.teardown(() => rt.close());

const m = new Machine(loadTopology(topologyPath('default'), ['system.sips.count=8']));
const pe = (sip: number) => m.peId({ sip, cube: 0, pe: 0 });

function fresh(): { overlap: LinkOverlap; sh: SharedState } {
  const sh = SharedState.create({ executors: 1, pes: m.totalPes, hosts: 1, nSlots: 2, slotSize: 64, cubes: m.sips * m.cubesPerSip, arenaBytes: 1024, links: new Links(m).count });
  return { overlap: new LinkOverlap(sh, m), sh };
}

t.test('a 1-hop flow that left a link before a 3-hop flow entered it is no meeting, though recorded after it (the false alarm)', async (t) => {
  const { overlap, sh } = fresh();
  const far = overlap.route(pe(0), pe(3));
  const near = overlap.route(pe(1), pe(2));
  t.equal(far.links.length, 3, 'SIP 0 to 3: three links');
  t.equal(near.links.length, 1, 'SIP 1 to 2: one link');
  t.ok(far.links.includes(near.links[0]), 'the 1-hop route is one of the 3-hop route\'s links');
  // The 3-hop piece (joins at 310 ns, ends at 360 ns) is recorded first, as a thread ahead in virtual time would.
  overlap.cross(far, 10_000, 50_000, 300_000, 0);
  // The 1-hop piece joins at 100 ns and leaves at 300 ns: 10 ns before the 3-hop piece enters.
  overlap.cross(near, 0, 200_000, 100_000, 0);
  t.equal(Atomics.load(sh.ctl, HEADER.ABORT_KIND), ABORT_KIND.NONE, 'no overlap reported: the session is not aborted');
});

t.test('a 1-hop flow still on the link when the 3-hop flow enters is a meeting, in either order', async (t) => {
  for (const farFirst of [true, false]) {
    const { overlap, sh } = fresh();
    const far = overlap.route(pe(0), pe(3));
    const near = overlap.route(pe(1), pe(2));
    const cross = [() => overlap.cross(far, 10_000, 50_000, 300_000, 0), () => overlap.cross(near, 0, 250_000, 100_000, 0)];
    for (const f of farFirst ? cross : cross.reverse()) f();
    t.equal(Atomics.load(sh.ctl, HEADER.ABORT_KIND), ABORT_KIND.LINK_OVERLAP, `aborted for the meeting (${farFirst ? '3-hop' : '1-hop'} recorded first)`);
  }
});

/** A small deterministic generator (xorshift32), so a failure names its seed. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

t.test('against every interval recorded before: no meeting is missed, and with at most LINK_INTERVALS intervals none is invented', async (t) => {
  let missed = 0;
  let invented = 0;
  let exactChecks = 0;
  let mergedChecks = 0;
  for (let seed = 1; seed <= 400; seed++) {
    const r = rng(seed);
    const times = new Float64Array(LINK_SPAN + 1);
    times[LINK_SPAN] = -7; // the next link's first word: merging must never write it
    const seen: [number, number][] = [];
    for (let i = 0; i < 24; i++) {
      const j = Math.floor(r() * 2000);
      const e = j + 1 + Math.floor(r() * 60);
      const truth = seen.some(([sj, se]) => j < se && sj < e);
      const got = recordInterval(times, 0, j, e);
      if (truth && !got) missed++;
      if (seen.length < LINK_INTERVALS) {
        exactChecks++;
        if (got !== truth) invented++;
      } else mergedChecks++;
      seen.push([j, e]);
    }
    if (times[LINK_SPAN] !== -7) t.fail(`seed ${seed}: wrote past its link's words`);
    t.ok(times[0] <= LINK_INTERVALS, `seed ${seed}: keeps at most ${LINK_INTERVALS} intervals`);
  }
  t.equal(missed, 0, 'no recorded meeting was missed');
  t.equal(invented, 0, `exact while the intervals fit (${exactChecks} checks)`);
  t.ok(mergedChecks > 0, `and merged ${mergedChecks} times`);
});

t.test('a link whose intervals were merged still keeps a flow that left before the merged run apart from it', async (t) => {
  const times = new Float64Array(LINK_SPAN);
  // A 3-hop channel's 12 pieces back to back from 1000 ps, 100 ps each with 5 ps between them.
  for (let k = 0; k < 12; k++) t.notOk(recordInterval(times, 0, 1000 + 105 * k, 1100 + 105 * k), `piece ${k} of one channel meets none of its own`);
  t.notOk(recordInterval(times, 0, 100, 900), 'a flow that left at 900 ps, before the first piece joined: no meeting');
  t.ok(recordInterval(times, 0, 1500, 1520), 'a flow inside the run: a meeting');
});

t.test('a program whose 1-hop flow leaves a link before its 3-hop flow enters it runs once on one thread, with the arbitrated times', async (t) => {
  // benches/late_meeting.ts with small meeting broadcasts: SIP 1 -> 2 (one hop, 82 ns of bytes) is off the link
  // 1 -> 2 long before SIP 0 -> 3 (three hops of 1 us each) enters it.
  const go = async (sets: string[]) => {
    let calls = 0;
    const run = await rt.session({ topology: 'ideal', algorithm: 'ring_allreduce', threads: 1, sets: ['system.sips.count=8', ...sets] }, (torch) => {
      calls++;
      return torch.multiprocessing.spawn(worker, { args: [1024, 1, 2048], nprocs: 8 });
    });
    return { calls, replayed: run.report.linkReplayed, critNs: Math.max(...run.value) };
  };
  const fast = await go([]);
  const slow = await go(['timing.link_fast_path=false']);
  t.equal(fast.replayed, false, 'no replay: nothing met');
  t.equal(fast.calls, 1, 'the callback ran once');
  t.equal(fast.critNs, slow.critNs, `crit as arbitrated from the start (${slow.critNs} ns)`);
});

// Runs on: main thread (tap). Covers: issue 26 item 5, "nothing is sized p^2", for the host
// side of a collective (decision 0150): making the world group on every rank, finding a
// rank in a group, and placing a collective on every rank; and the deadlock detector's pass
// while the session runs (decision 0151). Each test counts operations (member-list reads,
// Set insertions, machine look-ups, actor-state reads) for two world sizes 4x apart and
// checks that the count grows 4x, not 16x (or not at all): no wall time.
import t from 'tap';
import { placeCollective } from '../lib/ccl/placement.js';
import { findDeadlockReport } from '../lib/coordinator/deadlock.js';
import { ACTOR, ACTOR_STATE } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { nextChannelSet, ProcessGroup } from '../lib/ccl/process-group.js';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { Machine } from '../lib/topology/machine.js';
import { markActive } from '../lib/shm/active-actors.js';

const SMALL = 256;
const LARGE = 4 * SMALL;

/** A view of `list` that counts the reads of its elements into `reads.n`. */
function counting(list: readonly number[], reads: { n: number }): readonly number[] {
  return new Proxy(list, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.n++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

/** Swap a group's member list for a counting view of it (the field is readonly to users, not to this test). */
function countReads(g: ProcessGroup): { n: number } {
  const reads = { n: 0 };
  (g as { ranks: readonly number[] }).ranks = counting(g.ranks, reads);
  return reads;
}

/** Set insertions while `fn` runs: the constructor's check of a member list inserts every member once. */
function setInsertions(fn: () => void): number {
  const add = Set.prototype.add;
  let n = 0;
  Set.prototype.add = function (this: Set<unknown>, v: unknown) {
    n++;
    return add.call(this, v);
  };
  try {
    fn();
  } finally {
    Set.prototype.add = add;
  }
  return n;
}

t.test('every rank of p making the world group does O(1) work, not a check of p members (p^2 a thread)', async (t) => {
  const work = (p: number): number => setInsertions(() => {
    for (let r = 0; r < p; r++) ProcessGroup.world(p);
  });
  const small = work(SMALL);
  const large = work(LARGE);
  t.ok(large <= 4 * Math.max(small, 1), `Set insertions for ${SMALL} and ${LARGE} ranks: ${small} and ${large}`);
  t.equal(ProcessGroup.world(LARGE).ranks, ProcessGroup.world(LARGE).ranks, 'every rank of a thread shares one member list');
  t.same(ProcessGroup.world(5).ranks, [0, 1, 2, 3, 4], 'the members are 0 .. p - 1');
});

t.test('finding every member of a group reads the member list O(log p) times a member at most, not O(p)', async (t) => {
  const perMember = (p: number, every: number): number => {
    const g = new ProcessGroup(Array.from({ length: p / every }, (_, i) => i * every + every - 1), p);
    const reads = countReads(g);
    for (let q = 0; q < g.size; q++) {
      if (g.groupRank(q * every + every - 1) !== q) throw new Error(`group rank of member ${q} is wrong`);
    }
    if (every > 1 && g.groupRank(0) !== -1) throw new Error('rank 0 is not a member of every second rank');
    return reads.n / g.size;
  };
  for (const every of [1, 2]) {
    const small = perMember(SMALL, every);
    const large = perMember(LARGE, every);
    t.ok(large <= small + 4, `every ${every === 1 ? 'rank' : 'second rank'}: reads a member for ${SMALL} and ${LARGE} ranks: ${small.toFixed(2)} and ${large.toFixed(2)}`);
  }
});

t.test('placing a ring collective on every rank of the world looks up O(p) PEs in all, not p^2', async (t) => {
  const lookups = (p: number): number => {
    const m = new Machine(loadTopology(topologyPath('ideal'), [`system.sips.count=${p}`]));
    let n = 0;
    const peId = m.peId.bind(m);
    m.peId = (c) => {
      n++;
      return peId(c);
    };
    const world = ProcessGroup.world(p);
    for (let r = 0; r < p; r++) placeCollective(m, 'all_reduce', [{ cube: 0, pe: 0 }], world, world.groupRank(r), { kind: 'ring' });
    return n;
  };
  const small = lookups(SMALL);
  const large = lookups(LARGE);
  t.ok(large <= 4 * small, `PE look-ups for ${SMALL} and ${LARGE} ranks: ${small} and ${large}`);
});

t.test("a new group's channel set reads its members and each earlier group's once, not once per pair", async (t) => {
  const reads = (p: number): number => {
    const world = ProcessGroup.world(p);
    const count = countReads(world);
    // The second half of the ranks: each of the world's first p/2 members is not one of them.
    const half = counting(Array.from({ length: p / 2 }, (_, i) => p / 2 + i), count);
    const set = nextChannelSet(half, [world]);
    if (set !== 1) throw new Error(`the half overlaps the world: set 1, got ${set}`);
    return count.n;
  };
  const small = reads(SMALL);
  const large = reads(LARGE);
  t.ok(large <= 4 * small, `member reads for ${SMALL} and ${LARGE} ranks: ${small} and ${large}`);
});

t.test("a deadlock pass while one actor runs reads the active actors' states, not every actor's (every 20 ms, O(p) a pass before)", async (t) => {
  const m = new Machine(loadTopology(topologyPath('ideal'), ['system.sips.count=2']));
  const reads = (p: number): number => {
    const sh = SharedState.create({ executors: 1, pes: p, hosts: p + 1, nSlots: 2, slotSize: 64, cubes: p, arenaBytes: 1024 });
    const L = sh.layout;
    // Every PE idle, the last rank's host running: start-up and teardown, when the hosts run and the PEs do not.
    const host = L.hostActor(p - 1);
    Atomics.store(sh.ctl, L.actor(host, ACTOR.STATE), ACTOR_STATE.RUNNING);
    markActive(sh.ctl, L, host, true); // as the scheduler publishes it
    let n = 0;
    const actor = L.actor.bind(L);
    L.actor = (a, field) => {
      n++;
      return actor(a, field);
    };
    if (findDeadlockReport(sh, m) !== null) throw new Error('a running host is no deadlock');
    return n;
  };
  const small = reads(SMALL);
  const large = reads(LARGE);
  t.ok(large <= small && small < SMALL, `actor words looked up for ${SMALL} and ${LARGE} PEs: ${small} and ${large}`);
});

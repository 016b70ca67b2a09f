// Runs on: main thread (tap). Covers: findDeadlock (lib/coordinator/deadlock.ts) as
// pure logic over a session's shared views, without threads. Each case publishes
// the actors' states the way a waiter does (WAIT_* fields, then STATE, then GEN++)
// and asks whether the session is deadlocked: a wait-for cycle, two cycles, a chain
// that ends at a satisfied or running actor, a command still in flight.
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { findDeadlock, findDeadlockReport } from '../lib/coordinator/deadlock.js';
import { stronglyConnected } from '../lib/coordinator/deadlock-summary.js';
import { ACTOR, ACTOR_STATE, HEADER, PE, RING, WAIT_KIND } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { Machine } from '../lib/topology/machine.js';

// The default machine: 2 SIPs of 2x2 cubes with 4 corners x 1 PE, so PE 4 is (sip 0, cube 1, pe 0).
const machine = new Machine(loadTopology(topologyPath('default')));
const EAST = 0;
const WEST = 1;

function fresh(): SharedState {
  return SharedState.create({ executors: 1, pes: 8, hosts: 2, nSlots: 2, slotSize: 64, cubes: 4, arenaBytes: 1024 });
}

/** Actor `a` publishes that it waits for ctl[word] >= target (kind and aux explain it), at virtual time `atPs`. */
function block(sh: SharedState, a: number, kind: number, aux: number, word: number, target: number, atPs = 1000): void {
  const L = sh.layout;
  sh.times[L.clock(a)] = atPs;
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_WORD), word);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_TARGET), target);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_KIND), kind);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_AUX), aux);
  setState(sh, a, ACTOR_STATE.BLOCKED);
}

function setState(sh: SharedState, a: number, state: number): void {
  Atomics.store(sh.ctl, sh.layout.actor(a, ACTOR.STATE), state);
  Atomics.add(sh.ctl, sh.layout.actor(a, ACTOR.GEN), 1);
}

/** PE `receiver`'s kernel waits for message #0 on the ring on which `sender` sends in `dir`. */
function waitData(sh: SharedState, receiver: number, sender: number, dir: number): void {
  const L = sh.layout;
  const ring = L.ringOf(sender, dir, 0);
  block(sh, L.peActor(receiver), WAIT_KIND.IPCQ_DATA, ring, L.ring(ring, RING.TAIL), 1);
}

t.test('a session where nobody has started is not deadlocked', async (t) => {
  t.equal(findDeadlock(fresh(), machine), null);
});

t.test('two kernels each waiting for data from the other are a deadlock, and the report names both waits', async (t) => {
  const sh = fresh();
  waitData(sh, 0, 1, WEST);
  waitData(sh, 1, 0, EAST);
  t.same(findDeadlock(sh, machine), [
    'PE (sip 0, cube 0, pe 0) kernel waits for IPCQ data from PE (sip 0, cube 0, pe 1) (its west ring, message #0) since 1.000 ns',
    'PE (sip 0, cube 0, pe 1) kernel waits for IPCQ data from PE (sip 0, cube 0, pe 0) (its east ring, message #0) since 1.000 ns',
  ]);
});

t.test('two separate cycles are reported together, one line per waiter in actor order', async (t) => {
  const sh = fresh();
  waitData(sh, 4, 5, WEST);
  waitData(sh, 0, 1, WEST);
  waitData(sh, 5, 4, EAST);
  waitData(sh, 1, 0, EAST);
  const lines = findDeadlock(sh, machine);
  t.same(
    lines?.map((l) => l.slice(0, l.indexOf(' waits'))),
    ['PE (sip 0, cube 0, pe 0) kernel', 'PE (sip 0, cube 0, pe 1) kernel', 'PE (sip 0, cube 1, pe 0) kernel', 'PE (sip 0, cube 1, pe 1) kernel'],
  );
});

t.test('a chain of waits that ends at a running actor is not a deadlock', async (t) => {
  const sh = fresh();
  waitData(sh, 0, 1, WEST);
  setState(sh, sh.layout.peActor(1), ACTOR_STATE.RUNNING);
  t.equal(findDeadlock(sh, machine), null);
});

t.test('a chain of waits that ends at an idle actor is a deadlock: nothing will run it', async (t) => {
  // PE 1 never got a kernel: PE 0 waits for it forever.
  const sh = fresh();
  waitData(sh, 0, 1, WEST);
  t.same(findDeadlock(sh, machine), ['PE (sip 0, cube 0, pe 0) kernel waits for IPCQ data from PE (sip 0, cube 0, pe 1) (its west ring, message #0) since 1.000 ns']);
});

t.test('a blocked actor whose condition already holds is about to wake: not a deadlock', async (t) => {
  const sh = fresh();
  const L = sh.layout;
  waitData(sh, 0, 1, WEST);
  waitData(sh, 1, 0, EAST);
  Atomics.store(sh.ctl, L.ring(L.ringOf(0, EAST, 0), RING.TAIL), 1); // PE 0's message to PE 1 is published
  t.equal(findDeadlock(sh, machine), null);
});

t.test('a command reserved in a queue and not yet committed may still start a kernel: not a deadlock', async (t) => {
  const sh = fresh();
  waitData(sh, 0, 1, WEST);
  waitData(sh, 1, 0, EAST);
  Atomics.add(sh.ctl, HEADER.COMMANDS_IN_FLIGHT, 1);
  t.equal(findDeadlock(sh, machine), null);
  Atomics.sub(sh.ctl, HEADER.COMMANDS_IN_FLIGHT, 1);
  t.not(findDeadlock(sh, machine), null, 'once committed, the same waits are a deadlock');
});

t.test('finished actors do not hold a session up, and each wait kind is explained', async (t) => {
  const sh = fresh();
  const L = sh.layout;
  setState(sh, L.peActor(2), ACTOR_STATE.DONE);
  block(sh, L.hostActor(0), WAIT_KIND.KERNEL_DONE, 3, L.pe(3, PE.DONE_SEQ), 1, 2500);
  block(sh, L.channelActor(3, 4 + WEST), WAIT_KIND.CHANNEL, 4 + WEST, L.pe(3, PE.CHAN_DONE + 4 + WEST), 1, 2000);
  block(sh, L.peActor(3), WAIT_KIND.GRANT, 0, L.pe(3, PE.GRANT_SEQ), 1, 1500);
  t.same(findDeadlock(sh, machine), [
    'PE (sip 0, cube 0, pe 3) kernel waits for a grant on the memory channel of cube 0 since 1.500 ns',
    'PE (sip 0, cube 0, pe 3) inbound west channel waits for its receive from west since 2.000 ns',
    'rank 0 host waits for a kernel on PE (sip 0, cube 0, pe 3) to finish since 2.500 ns',
  ]);
});

t.test('the summary groups the waiters by what they wait for and names the cycle', async (t) => {
  const sh = fresh();
  // A ring of four kernels, each waiting for data on the east ring of the PE before it.
  for (let pe = 0; pe < 4; pe++) waitData(sh, pe, (pe + 3) % 4, EAST);
  const r = findDeadlockReport(sh, machine);
  t.equal(r?.waiters.length, 4, 'one line per waiter as before');
  t.same(r?.summary, [
    '4 actors wait:',
    "  4 PEs' kernels wait for IPCQ data on a neighbour's east ring, message #0, since 1.000 ns",
    "the PEs' waits for IPCQ data form one cycle: 4 PEs (PE (sip 0, cube 0, pe 0) waits for PE (sip 0, cube 0, pe 3) waits for PE (sip 0, cube 0, pe 2) waits for ...)",
  ]);
});

t.test('two cycles are counted as two, and a chain that ends at an idle PE is no cycle', async (t) => {
  const two = fresh();
  waitData(two, 4, 5, WEST);
  waitData(two, 0, 1, WEST);
  waitData(two, 5, 4, EAST);
  waitData(two, 1, 0, EAST);
  t.match(findDeadlockReport(two, machine)?.summary.at(-1), /form 2 cycles: 2 PEs .*; 2 PEs /);
  const chain = fresh();
  waitData(chain, 0, 1, WEST);
  t.equal(findDeadlockReport(chain, machine)?.summary.at(-1), "the PEs' waits for IPCQ data form no cycle");
});

t.test('the cycle search walks a ring of 100000 PEs without overflowing the stack', async (t) => {
  const n = 100_000;
  const edges = new Map<number, number[]>(Array.from({ length: n }, (_, i) => [i, [(i + 1) % n]]));
  const parts = stronglyConnected(edges);
  t.equal(parts.length, 1);
  t.equal(parts[0].length, n);
});

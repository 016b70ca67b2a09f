// The memory-channel arbiter (lib/coordinator/arbiter.ts), as pure logic over a
// session's shared views, without threads: which pending requests a pass grants,
// given every other actor's published state and clock (its lower bound).
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { Arbiter } from '../lib/coordinator/arbiter.js';
import { ACTOR, ACTOR_STATE, GRANT, HEADER, PE } from '../lib/shm/layout.js';
import { CommandReader, postCommand, type LaunchCommand } from '../lib/pe/commands.js';
import { NO_ACTOR, Scheduler } from '../lib/sync/scheduler.js';
import { countStateChange, SharedState } from '../lib/shm/shared-state.js';
import { Machine } from '../lib/topology/machine.js';
import { latencyPs, transferPs } from '../lib/time/virtual-time.js';
import { markActive } from '../lib/shm/active-actors.js';

const machine = new Machine(loadTopology(topologyPath('default')));
const hbm = machine.topology.timing.memory.hbm;
const LAT = latencyPs(hbm.latency_ns);

function fresh() {
  const sh = SharedState.create({ executors: 1, pes: 4, hosts: 1, nSlots: 2, slotSize: 64, cubes: 1, arenaBytes: 1024 });
  return { sh, L: sh.layout, arbiter: new Arbiter(sh, machine) };
}

/** PE `pe` asks for `bytes` of cube 0's HBM at `atPs` and waits (BLOCKED on its grant). */
function request(sh: SharedState, pe: number, atPs: number, bytes = 256): void {
  const L = sh.layout;
  sh.times[L.grant(pe, GRANT.AT_PS)] = atPs;
  sh.times[L.grant(pe, GRANT.BYTES)] = bytes;
  sh.times[L.grant(pe, GRANT.SPACE)] = 1;
  sh.times[L.grant(pe, GRANT.CUBE)] = 0;
  Atomics.add(sh.ctl, HEADER.GRANTS_PENDING, 1);
  const n = Atomics.add(sh.ctl, L.pe(pe, PE.REQ_SEQ), 1) + 1;
  setActor(sh, L.peActor(pe), ACTOR_STATE.BLOCKED, atPs, L.pe(pe, PE.GRANT_SEQ), n);
}

function setActor(sh: SharedState, a: number, state: number, clockPs: number, word = 0, target = 0): void {
  const L = sh.layout;
  sh.times[L.clock(a)] = clockPs;
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_WORD), word);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.WAIT_TARGET), target);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.STATE), state);
  markActive(sh.ctl, L, a, state === ACTOR_STATE.RUNNING || state === ACTOR_STATE.BLOCKED);
  Atomics.add(sh.ctl, L.actor(a, ACTOR.GEN), 1);
  countStateChange(sh, 0);
}

const busy = (bytes: number) => transferPs(bytes, hbm.bandwidth_gb_s);

t.test('a request with every other actor idle is granted at once, at latency + bytes/bandwidth', async (t) => {
  const { sh, L, arbiter } = fresh();
  request(sh, 0, 1000);
  t.same(arbiter.pass(), [0]);
  t.equal(sh.times[L.grant(0, GRANT.DONE_PS)], 1000 + LAT + busy(256));
  t.equal(Atomics.load(sh.ctl, L.pe(0, PE.GRANT_SEQ)), 1, 'GRANT_SEQ reaches REQ_SEQ');
  t.equal(Atomics.load(sh.ctl, HEADER.GRANTS_PENDING), 0, 'nothing pending');
  t.equal(sh.times[L.clock(L.peActor(0))], sh.times[L.grant(0, GRANT.DONE_PS)], "the requester's bound is now its done time");
});

t.test('a running actor whose clock is not past the request holds it back; one past it does not', async (t) => {
  const { sh, L, arbiter } = fresh();
  request(sh, 0, 1000);
  setActor(sh, L.channelActor(1, 0), ACTOR_STATE.RUNNING, 1000);
  t.same(arbiter.pass(), [], 'a running actor at the same time could still ask at 1000');
  setActor(sh, L.channelActor(1, 0), ACTOR_STATE.RUNNING, 1001);
  t.same(arbiter.pass(), [0], 'at 1001 it cannot');
});

t.test('a blocked actor holds a request back only while its wait is already satisfied', async (t) => {
  const { sh, L, arbiter } = fresh();
  request(sh, 0, 5000);
  const word = L.pe(2, PE.DONE_SEQ);
  setActor(sh, L.hostActor(0), ACTOR_STATE.BLOCKED, 10, word, 1);
  t.same(arbiter.pass(), [0], 'its wait is false: only a running actor can wake it, and none can before 5000');
  request(sh, 0, 9000);
  Atomics.store(sh.ctl, word, 1);
  t.same(arbiter.pass(), [], 'its wait came true: it runs from 10');
});

t.test('an actor that is neither running nor blocked bounds nothing, whatever its clock', async (t) => {
  const { sh, L, arbiter } = fresh();
  request(sh, 0, 1000);
  setActor(sh, L.channelActor(2, 1), ACTOR_STATE.RUNNING, 0);
  t.same(arbiter.pass(), [], 'running at 0: it could still ask');
  setActor(sh, L.channelActor(2, 1), ACTOR_STATE.IDLE, 0);
  t.same(arbiter.pass(), [0], 'idle: only a running actor can start it again');
});

t.test('a command in flight holds every request back, from the producer reserving it to the executor taking it', async (t) => {
  const { sh, arbiter } = fresh();
  const sched = new Scheduler(sh, 0, false, null);
  t.teardown(() => sched.stop(new Error('test over')));
  request(sh, 0, 1000);
  const cmd = { type: 'launch', pe: 1, seq: 0, hostExecutor: 0, kernel: { module: 'file:///k.js', exportName: 'k' }, name: 'k', args: [], ports: { size: 1 }, rank: 0, startPs: 0, tag: -1 } as unknown as LaunchCommand;
  await postCommand(sh, sched, NO_ACTOR, 0, cmd);
  t.same(arbiter.pass(), [], 'posted, not yet taken: the kernel may start at a time no snapshot shows');
  const next = await new CommandReader(sh, sched, 0).next();
  t.equal(next.cmd.pe, 1, 'the executor reads the command');
  t.same(arbiter.pass(), [], 'read, not yet committed to its PE');
  next.commit();
  t.same(arbiter.pass(), [0], 'committed: the PE shows it in its state from now on');
});

t.test('a request alone pending is still held back, on its own pass, by another PE that runs at an earlier time', async (t) => {
  const { sh, L, arbiter } = fresh();
  const self = L.peActor(0);
  request(sh, 0, 2000);
  setActor(sh, self, ACTOR_STATE.RUNNING, 0); // the pass is its own
  setActor(sh, L.peActor(1), ACTOR_STATE.RUNNING, 1500);
  t.same(arbiter.pass(self, 0), [], 'PE 1 runs at 1500: it may still ask before 2000');
  request(sh, 1, 1800);
  t.same(arbiter.pass(self, 0), [1, 0], 'it asked at 1800: PE 1 first, then PE 0 (two pending: the PEs are scanned)');
  t.equal(sh.times[L.grant(0, GRANT.DONE_PS)], Math.max(2000, 1800 + busy(256)) + LAT + busy(256), 'PE 0 starts when PE 1 leaves the channel, or at its own time');
});

t.test('requests are served in (time, PE) order, one channel access at a time, and a pass grants a run of them', async (t) => {
  const { sh, L, arbiter } = fresh();
  request(sh, 3, 0);
  request(sh, 1, 0);
  request(sh, 2, 700);
  t.same(arbiter.pass(), [1, 3, 2], 'PE 1 and 3 at 0 (PE order), then PE 2: the granted ones are bound by their done times');
  const b = busy(256);
  t.equal(sh.times[L.grant(1, GRANT.DONE_PS)], LAT + b);
  t.equal(sh.times[L.grant(3, GRANT.DONE_PS)], b + LAT + b, 'PE 3 starts when PE 1 leaves the channel');
  t.equal(sh.times[L.grant(2, GRANT.DONE_PS)], Math.max(700, 2 * b) + LAT + b);
  t.equal(sh.times[L.channelFree(0, 1)], Math.max(700, 2 * b) + b);
});

t.test('the requester running its own pass is not held back by its stale clock, and after its grant it is bound by its done time', async (t) => {
  const { sh, L, arbiter } = fresh();
  const self = L.peActor(0);
  request(sh, 0, 2000);
  setActor(sh, self, ACTOR_STATE.RUNNING, 0); // still running: the pass is its own
  request(sh, 1, 2000 + LAT + busy(256)); // exactly PE 0's done time: PE 0 may ask again then, first in PE order
  t.same(arbiter.pass(self, 0), [0], 'PE 0 is granted; PE 1 waits for what PE 0 does at its done time');
  t.same(arbiter.pass(self, 0), [], 'still: PE 0 has not asked again');
  sh.times[L.grant(1, GRANT.AT_PS)] += 1;
  t.same(arbiter.pass(self, 0), [], 'nor one just after it: PE 0 runs from its done time');
  request(sh, 0, 2000 + LAT + busy(256) + 5000);
  setActor(sh, self, ACTOR_STATE.RUNNING, 0);
  t.same(arbiter.pass(self, 0), [1, 0], 'once PE 0 has asked again, later, PE 1 goes first, then PE 0');
});

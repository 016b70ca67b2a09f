// Runs on: main thread (tap), and sessions on real threads. Covers decision 0275: the
// actors of a thread that stop in one turn of its event loop while requests are pending
// ring the coordinator at the first stop and once more as the turn ends (TurnEndRing,
// lib/sync/wake.ts), not once each: a pass rung at every stop ran while the thread still
// ran actors, and its snapshot mostly failed. No ring is lost for it: with the coordinator's timer at 5 s, a pass that
// made something final without a ring would be counted (SessionReport.unrungGrants).
import t from 'tap';
import { ACTOR_STATE, HEADER, PE, WAIT_KIND } from '../lib/shm/layout.js';
import { Scheduler } from '../lib/sync/scheduler.js';
import { CCL_FIXTURES, collectiveWorker, type CollectiveCase } from './fixtures/ccl.js';
import { PEERS } from './helpers/all-to-all.js';
import { coordinatorSession } from './helpers/coordinator-session.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES], coordinatorTimerMs: 5000 });
t.teardown(() => rt.close());

const turnEnds = (): Promise<void> => new Promise<void>((r) => setImmediate(r));

t.test('actors that stop in one turn with a request pending ring the coordinator at the first stop and once as the turn ends', async (t) => {
  const PES = 4;
  const { sh } = coordinatorSession([`system.sips.count=${PES}`]);
  const L = sh.layout;
  const rings = (): number => Atomics.load(sh.ctl, HEADER.COORD_DOORBELL);
  // A memory request pending: each stop may have been the last actor that bounded it.
  Atomics.add(sh.ctl, HEADER.GRANTS_PENDING, 1);
  const sched = new Scheduler(sh, 0, false, null);
  const everyPeStops = (): void => {
    for (let pe = 0; pe < PES; pe++) {
      sched.setState(L.peActor(pe), ACTOR_STATE.RUNNING);
      sched.block(L.peActor(pe), L.pe(pe, PE.GRANT_SEQ), 1, WAIT_KIND.GRANT, 0, 1000 * (pe + 1));
    }
  };
  const before = rings();
  sched.setState(L.peActor(0), ACTOR_STATE.RUNNING);
  sched.block(L.peActor(0), L.pe(0, PE.GRANT_SEQ), 1, WAIT_KIND.GRANT, 0, 1000);
  t.equal(rings(), before + 1, 'the turn’s first stop rings at once');
  await turnEnds();
  t.equal(rings(), before + 1, 'and alone, owes nothing at the turn’s end');
  everyPeStops();
  t.equal(rings(), before + 2, `${PES} stops in a turn: the first rang, the others wait for the turn’s end`);
  await turnEnds();
  t.equal(rings(), before + 3, 'one more ring for them, once the turn ended');
  // With nothing pending, a stop owes nothing.
  Atomics.sub(sh.ctl, HEADER.GRANTS_PENDING, 1);
  everyPeStops();
  await turnEnds();
  t.equal(rings(), before + 3, 'no ring for stops with nothing pending');
});

t.test('an all-to-all on a switch rings the coordinator a few times a step, not for every stop, and loses no ring', async (t) => {
  // Every piece of the pairwise exchange goes to the link arbiter; before decision 0275 the
  // coordinator was rung 3.2 times a message here, and ran about one pass a message.
  const P = 16;
  const c: CollectiveCase = { kind: 'allToAllSingle', nElem: 64, dtype: 'f32' };
  for (const threads of [1, 2] as const) {
    const run = await rt.session({ topology: 'single_switch_8', threads, sets: [`system.sips.count=${P}`, ...PEERS(P)] }, (torch) => torch.multiprocessing.spawn(collectiveWorker, { args: [c], nprocs: P }));
    const { messages, sync, coordinatorPasses, unrungGrants, linkSnapshotsFailed } = run.report;
    t.ok(messages >= P * (P - 1), `--threads ${threads}: every ordered pair sent (${messages} messages)`);
    // At most two rings a turn: one thread's turns each resume many ranks (32-45 rings here);
    // two threads' turns are shorter and their number follows the host's scheduling (75-121
    // rings seen, the most under the suite's load). Before: 753 and 878, over three a message.
    const most = threads === 1 ? messages / 2 : messages;
    t.ok(sync.coordinatorRings < most, `--threads ${threads}: fewer than ${most} rings (${sync.coordinatorRings} rings, ${coordinatorPasses} passes)`);
    t.equal(unrungGrants, 0, `--threads ${threads}: every flow made final by a pass something rang`);
    // Counted for KERNBENCH_SYNC_COUNTS (at p = 16 there are few either way: 11-21 of 251-327 passes before, 5-6 of 31-35 now).
    t.ok(Number.isInteger(linkSnapshotsFailed) && linkSnapshotsFailed >= 0 && linkSnapshotsFailed <= coordinatorPasses, `--threads ${threads}: ${linkSnapshotsFailed} of ${coordinatorPasses} passes without a consistent snapshot, counted`);
  }
});

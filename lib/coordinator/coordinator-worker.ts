// Runs on: the coordinator thread (one per process, reused across sessions).
// Owns: the session's global view — deadlock detection and the abort that
// follows it, the abort of a session in which a rank failed, once nothing
// else can happen in it, and the arbiter passes that requesters could not run
// themselves (./arbiter.ts). The coordinator has nothing else to run, so it may block in
// Atomics.wait between passes (DESIGN §3); it is never on the IPCQ path.
import { parentPort } from 'node:worker_threads';
import { DeadlockError, serializeError } from '../errors.js';
import { ABORT_KIND, HEADER } from '../shm/layout.js';
import { abortSession, CoordinatorDoorbell } from '../sync/wake.js';
import { SharedState, stateEpoch } from '../shm/shared-state.js';
import { Machine } from '../topology/machine.js';
import { loadSipKindModule, sipKindToLoad } from '../loader/topology-kind.js';
import { unreachable, type FromCoordinator, type ToCoordinator } from '../sync/messages.js';
import { findDeadlockReport } from './deadlock.js';
import { Arbiter } from './arbiter.js';
import { LinkArbiter } from './link-arbiter.js';
import { EXEC, PE } from '../shm/layout.js';
import { arbitrateHeld, launchHorizon, othersMayRun, releaseHeld } from '../sync/link-claims.js';

/** Release passes over held pieces before the coordinator waits for its next ring (something kept changing state). */
const HELD_PASS_TRIES = 3;

/**
 * Pause between detector passes: bounds how late a deadlock is reported (the
 * issue asks for well under 1 s). A pass scans the actors (O(actors), exiting at the
 * first RUNNING one) only when no actor changed state since the previous pass, so a
 * deadlock is reported within two intervals; the interval keeps it off the 2 cores.
 */
const PASS_INTERVAL_MS = 20;

const port = parentPort;
if (!port) throw new Error('coordinator-worker must run in a worker thread');

function post(m: FromCoordinator): void {
  port?.postMessage(m);
}

port.on('message', (m: ToCoordinator) => {
  switch (m.type) {
    case 'session': {
      const run = (): void => {
        try {
          runSession(m);
        } catch (e) {
          fail(m, e);
        }
      };
      // The session's kind module (a user's, decision 0050; or a shipped one, decision 0205) is imported first; a loaded kind starts at once.
      const kind = sipKindToLoad(m.plan.topology);
      if (kind === undefined) run();
      else loadSipKindModule(kind).then(run, (e: unknown) => fail(m, e));
      break;
    }
    case 'shutdown':
      port.close();
      break;
    default:
      unreachable(m);
  }
});

/**
 * The coordinator cannot serve session `m` (`e` was thrown): abort the session with
 * `e` as its report, so that every waiter ends now and the run fails with it, then
 * tell main. Without the abort, actors waiting for a grant or a link flow would wait
 * for passes that never come: a silent stall.
 */
function fail(m: Extract<ToCoordinator, { type: 'session' }>, e: unknown): void {
  const report = serializeError(e);
  try {
    abortSession(SharedState.attach(m.plan.dims, m.buffers), ABORT_KIND.FAULT, report);
  } finally {
    post({ type: 'fatal', error: report });
  }
}

function runSession(m: Extract<ToCoordinator, { type: 'session' }>): void {
  const sh = SharedState.attach(m.plan.dims, m.buffers);
  const machine = new Machine(m.plan.topology);
  const ctl = sh.ctl;
  const arbiter = new Arbiter(sh, machine);
  // With pieces proved alone (claimed), the arbiter times those that are not.
  const links = m.plan.links !== 'none' ? new LinkArbiter(sh, machine) : null;
  let passes = 0;
  let deadlock = false;
  let unrungGrants = 0;
  const timerMs = m.timerMs ?? PASS_INTERVAL_MS;
  const doorbell = new CoordinatorDoorbell(ctl);
  /** stateEpoch as the last detector pass read it. */
  let lastEpoch = -1;
  while (Atomics.load(ctl, HEADER.SESSION_END) === 0) {
    // Arbiter passes are driven by the doorbell (a request, or an actor that stopped
    // running while requests are pending); the timeout only paces the deadlock detector.
    const rung = doorbell.wait(timerMs);
    if (Atomics.load(ctl, HEADER.ABORT) !== 0) continue; // already aborting: wait for the end
    passes++;
    Atomics.add(ctl, HEADER.COORD_PASSES, 1);
    // Pieces held for the launch horizon: release those it now passes; when nothing else can run, hand them to the link arbiter.
    if (Atomics.load(ctl, HEADER.HELD_PENDING) > 0) passHeld();
    if (Atomics.load(ctl, HEADER.GRANTS_PENDING) > 0 || Atomics.load(ctl, HEADER.FLOWS_PENDING) > 0) {
      arbiter.lock();
      const granted: number[] = [];
      const sent: number[] = [];
      try {
        // Each arbiter's pass moves the other's bound: a grant raises its requester's bound for
        // the link arbiter (which passes after it), and a link pass that makes flows final or
        // raises the link bound may let the memory arbiter grant. Nobody rings for what the
        // coordinator did itself, so the memory arbiter passes again then, not at the timer.
        for (;;) {
          granted.push(...arbiter.pass());
          if (!links) break;
          const linkBound = sh.times[sh.layout.linkBound];
          const f = links.pass();
          sent.push(...f);
          if (Atomics.load(ctl, HEADER.GRANTS_PENDING) === 0 || (f.length === 0 && sh.times[sh.layout.linkBound] === linkBound)) break;
        }
      } finally {
        arbiter.unlock();
      }
      if (!rung) unrungGrants += granted.length + sent.length; // nobody asked for this pass: a ring was late, or lost (SessionReport.unrungGrants)
      for (const pe of granted) wakeExecutor(m.plan.peExecutor[pe]);
      // A link flow made final: wake its sending channel (pe * 4 + dir).
      for (const c of sent) wakeExecutor(m.plan.peExecutor[Math.floor(c / 4)]);
      // Requests still pending: the session is not at rest (a pass grants at rest), so no deadlock to look for.
      if (Atomics.load(ctl, HEADER.GRANTS_PENDING) > 0 || Atomics.load(ctl, HEADER.FLOWS_PENDING) > 0 || granted.length > 0 || sent.length > 0) continue;
    }
    // An actor changed state since the last pass: the session moved, so skip the scan
    // (O(actors), every pass interval: O(p) work per message at large p). A deadlock
    // leaves the epoch still, and the next pass scans: found one interval later at most.
    const epoch = stateEpoch(sh);
    const moved = epoch !== lastEpoch;
    lastEpoch = epoch;
    if (moved) continue;
    const waiters = findDeadlockReport(sh, machine); // non-null: the session is quiescent
    if (waiters && (Atomics.load(ctl, HEADER.GRANTS_PENDING) > 0 || Atomics.load(ctl, HEADER.FLOWS_PENDING) > 0)) continue; // a request came in meanwhile: its ring brings the next pass
    if (waiters && Atomics.load(ctl, HEADER.RANKS_FAILED) > 0) {
      // A rank failed and nothing else can happen: every rank that was going to fail
      // on its own has failed, so the root causes are final. Abort the rest now
      // (docs/decisions/0015-root-causes-at-quiescence.md).
      abortSession(sh, ABORT_KIND.RANK_FAILED);
    } else if (waiters) {
      // The coordinator's own stack says nothing about the program: the report is the waiters.
      const report = serializeError(new DeadlockError(waiters.waiters, waiters.summary));
      report.stack = undefined;
      deadlock = abortSession(sh, ABORT_KIND.DEADLOCK, report);
    }
  }
  post({ type: 'session-done', passes, deadlock, unrungGrants, linkSnapshotsFailed: links?.snapshotsFailed ?? 0 });

  function passHeld(): void {
    const wake = (pe: number, dir: number): void => {
      Atomics.notify(ctl, sh.layout.pe(pe, PE.HOLD + dir));
      wakeExecutor(m.plan.peExecutor[pe]);
    };
    // Handed to the arbiter only when nothing changed state (a new hold included) since the
    // horizon was taken: a piece held meanwhile may let the pass release the others.
    for (let attempt = 0; attempt < HELD_PASS_TRIES; attempt++) {
      const epoch = stateEpoch(sh);
      if (releaseHeld(sh, machine, launchHorizon(sh, machine), wake) > 0 || othersMayRun(sh)) return;
      if (stateEpoch(sh) === epoch) {
        arbitrateHeld(sh, wake);
        return;
      }
    }
  }

  function wakeExecutor(e: number): void {
    const db = sh.layout.exec(e, EXEC.DOORBELL);
    Atomics.add(ctl, db, 1);
    Atomics.notify(ctl, db);
  }
}


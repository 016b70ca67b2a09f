// Runs on: the executor thread the PE is placed on. Owns: one PE's state for a
// session — its virtual clock, its DMA channels, and the queue of kernels
// launched on it, which it runs one at a time: in launch-sequence (ticket)
// order, except launches onto a PE shared by a spawn's hosts, which run in
// (virtual time, host) order once admitted (./admission.ts). Run k's record is
// row k, whatever its ticket (RECORD.TICKET says which).
import { publishClock } from '../sync/pe-floor.js';
import { importModule } from '../loader/user-module.js';
import { AbortError, DeadlockError, KernelError, RunStoppedError, serializeError } from '../errors.js';
import { actorStates } from '../coordinator/actor-states.js';
import { writeKernelName } from '../shm/shared-state.js';
import { FaultOwner } from '../sync/fault-owner.js';
import { abortSession } from '../sync/wake.js';
import { PeChannels } from '../ipcq/channel.js';
import { KernelContext } from '../kernel/context.js';
import { isKernel, type Kernel } from '../kernel/define.js';
import { kernelEnded, kernelStarted } from '../tile/slab.js';
import { epochEnded } from '../sync/young-gc.js';
import { KernbenchError } from '../errors.js';
import { ABORT_KIND, ACTOR_STATE, PE, RECORD, peerRing } from '../shm/layout.js';
import type { PeCoord } from '../topology/machine.js';
import type { LaunchCommand } from './commands.js';
import { admit, firstByKey } from './admission.js';
import type { ThreadEnv } from '../sync/thread-env.js';
import { VirtualClock } from '../time/virtual-clock.js';
import { raceLog } from '../race/log.js';
import { claimLinks, releaseLinks, type Claims } from '../sync/link-claims.js';

export class PeRuntime {
  /** This PE's virtual time (written only by this PE's kernels, on this thread), under the run's virtual-time limit. */
  readonly clock: VirtualClock;
  readonly coord: PeCoord;
  /** Its DMA channels, one outbound and one inbound a direction, built as kernels first use them. */
  readonly channels: PeChannels;
  /** Launches received and not yet run, by ticket. */
  private readonly queued = new Map<number, LaunchCommand>();
  /** The lowest ticket not yet run. */
  private nextTicket: number;
  /** Tickets above nextTicket already run (ordered launches run ahead of their ticket). */
  private readonly ranAhead = new Set<number>();
  /** Kernels run so far (the next run's index: its record row, DONE_SEQ once it ends). */
  private runs: number;
  private running = false;

  constructor(
    readonly env: ThreadEnv,
    readonly id: number,
  ) {
    this.coord = env.machine.coord(id);
    this.clock = new VirtualClock(env.plan.maxVirtualTimePs);
    this.channels = new PeChannels(env, id);
    this.runs = Atomics.load(env.shared.ctl, env.shared.layout.pe(id, PE.DONE_SEQ));
    this.nextTicket = this.runs;
  }

  chanDoneWord(channel: number): number {
    return this.env.shared.layout.pe(this.id, PE.CHAN_DONE + channel);
  }

  /**
   * Accept a launch. Marks the PE RUNNING before the command is committed, so the
   * deadlock detector never sees a gap; the kernel starts once the executor has
   * committed it (a microtask later), so that an arbiter pass the kernel runs
   * (lib/coordinator/arbiter.ts) never sees its own command still in flight.
   */
  accept(cmd: LaunchCommand): void {
    this.queued.set(cmd.seq, cmd);
    // Its host may wait on DONE_SEQ for a count read before this command arrived, and was not
    // woken by the kernels that finished since (only queued hosts are): let it look again.
    if (cmd.ordered) this.env.sched.publish(this.env.shared.layout.pe(this.id, PE.DONE_SEQ), cmd.hostExecutor);
    if (!this.running) {
      this.running = true;
      this.env.sched.setState(this.env.shared.layout.peActor(this.id), ACTOR_STATE.RUNNING);
      queueMicrotask(() => void this.drainQueue());
    }
  }

  private async drainQueue(): Promise<void> {
    for (;;) {
      const head = this.queued.get(this.nextTicket);
      let cmd: LaunchCommand | undefined = head && !head.ordered ? head : undefined;
      // Decided synchronously: a command accepted while this loop awaited would find it still
      // running and not start another, so the loop must not stop on an answer from before it.
      if (!cmd && [...this.queued.values()].some((c) => c.ordered)) try {
        cmd = await this.nextOrdered();
      } catch (e) {
        // The session aborted (or deadlocked) while this PE waited to be admitted: its queued
        // launches never run; their hosts see the same abort in their own waits.
        if (e instanceof AbortError || e instanceof DeadlockError) break;
        throw e;
      }
      if (!cmd) break;
      this.queued.delete(cmd.seq);
      await this.run(cmd, this.runs);
      this.runs++;
      if (cmd.seq !== this.nextTicket) this.ranAhead.add(cmd.seq);
      else for (this.nextTicket++; this.ranAhead.delete(this.nextTicket); ) this.nextTicket++;
    }
    this.running = false;
    this.env.sched.setState(this.env.shared.layout.peActor(this.id), ACTOR_STATE.IDLE);
  }

  /** With shared links proved alone (plan.links 'claimed'): claim the routes of the kernel's outbound channels until it ends. */
  private claimLinks(cmd: LaunchCommand): Claims | undefined {
    const { env } = this;
    if (!env.linksClaimed) return undefined;
    const ccl = env.plan.ccl;
    return claimLinks(env.shared, env.machine, this.id, cmd.ports, (k) => peerRing(ccl.channel_sets, ccl.peer_ranks ?? 0, cmd.ports.set, k).dir);
  }

  /**
   * The ordered launch to run next, once admitted; undefined when none is queued.
   * An unordered launch with the lowest ticket (one made before the PE was shared)
   * still goes first: admission waits until no command is in flight, so it is
   * queued by then.
   */
  private async nextOrdered(): Promise<LaunchCommand | undefined> {
    const first = firstByKey([...this.queued.values()].filter((c) => c.ordered));
    if (!first) return undefined;
    await admit(this.env, this.id, this.env.shared.layout.peActor(this.id), first.startPs);
    const head = this.queued.get(this.nextTicket);
    if (head && !head.ordered) return head;
    // Never undefined here: the launch found above is still queued (only drainQueue takes one out).
    return firstByKey([...this.queued.values()].filter((c) => c.ordered));
  }

  private async run(cmd: LaunchCommand, runIndex: number): Promise<void> {
    const { env } = this;
    const L = env.shared.layout;
    const start = this.clock.advanceTo(cmd.startPs);
    // Before the kernel can send, and before this actor can publish a later clock (lib/sync/link-claims.ts).
    const claims = this.claimLinks(cmd);
    // Who runs here, and since when: what a stopped run's report names for a kernel that
    // never waits (lib/coordinator/actor-states.ts). Before the state, as a wait's fields are.
    writeKernelName(env.shared, this.id, cmd.name);
    env.shared.times[L.clock(L.peActor(this.id))] = start;
    env.sched.setState(L.peActor(this.id), ACTOR_STATE.RUNNING);
    // The kernel run's identity: the tiles its tl makes are its own (lib/tile/slab.ts).
    const run = kernelStarted();
    const tl = new KernelContext(this, cmd.name, cmd.ports, cmd.rank, run);
    let status = 0;
    // Timers and promise continuations the kernel schedules belong to this run (lib/executor/faults.ts).
    const owner = new FaultOwner(`kernel '${cmd.name}' on ${env.machine.describePe(this.id)}`, () => this.clock.nowPs);
    if (raceLog.on) raceLog.kernelStart(this.id, cmd.seq);
    try {
      await owner.run(async () => {
        const kernel = await importKernel(cmd);
        await owner.callAs(() => kernel.fn(tl, ...cmd.args));
        await tl.end(false);
      });
    } catch (thrown) {
      status = 1;
      void tl.end(true);
      const e = isVirtualTimeLimit(thrown) ? this.stopAtLimit(cmd.name, thrown) : thrown;
      // A deadlock's report is the session's (the report slot), read by whoever needs it: not
      // serialized again into every PE's slot (at a thousand ranks, most of the wait; issue 23 item 4).
      const error = e instanceof DeadlockError ? serializeError(new DeadlockError([], ['(the report is in the session report slot)'])) : serializeError(e);
      env.shared.writeErrorSlot(this.id, { error, atPs: this.clock.nowPs });
    }
    if (raceLog.on) raceLog.kernelEnd(this.id, cmd.seq);
    if (claims) releaseLinks(env.shared, claims);
    // Its tiles are dead now (lib/tile/slab.ts recycles their slabs once no running kernel has
    // tiles there; after the thread's last kernel, it collects its young generation when next
    // idle, ./young-gc.ts).
    if (kernelEnded(run, status === 0)) epochEnded();
    // Release the kernel's TCM scratch (only this PE's kernels allocate it while the kernel runs).
    if (tl.scratchBytes > 0) Atomics.sub(env.shared.ctl, L.pe(this.id, PE.TCM_TOP), tl.scratchBytes);
    const t = env.shared.times;
    env.trace?.kernel(this.id, runIndex, cmd.name, start, this.clock.nowPs);
    t[L.record(this.id, runIndex, RECORD.START_PS)] = start;
    t[L.record(this.id, runIndex, RECORD.END_PS)] = this.clock.nowPs;
    t[L.record(this.id, runIndex, RECORD.STATUS)] = status;
    t[L.record(this.id, runIndex, RECORD.TAG)] = cmd.tag;
    t[L.record(this.id, runIndex, RECORD.WAIT_PS)] = tl.reportedWaitPs;
    t[L.record(this.id, runIndex, RECORD.TICKET)] = cmd.seq;
    const done = L.pe(this.id, PE.DONE_SEQ);
    Atomics.store(env.shared.ctl, done, runIndex + 1);
    env.sched.publish(done, cmd.hostExecutor);
    // Hosts of queued ordered launches wait for each kernel this PE finishes (HostRuntime.finishedRun).
    if (cmd.ordered) for (const e of new Set([...this.queued.values()].filter((c) => c.ordered && c.hostExecutor !== cmd.hostExecutor).map((c) => c.hostExecutor))) env.sched.publish(done, e);
    // A faulted kernel's body may still be parked in a wait: abort the session, after its
    // end is published, so its host sees the KernelError itself (HostRuntime.complete).
    if (owner.faulted) abortSession(env.shared, ABORT_KIND.FAULT, serializeError(new KernelError(cmd.name, this.coord, this.clock.nowPs, serializeError(owner.faulted))));
  }

  /**
   * The kernel passed the run's virtual-time limit: the run stops as a timed-out one does,
   * with what every actor was doing (this PE at its clock past the limit). The report goes
   * to the session's report slot; the kernel fails with it.
   */
  private stopAtLimit(kernel: string, limit: KernbenchError): RunStoppedError {
    const { env } = this;
    const L = env.shared.layout;
    publishClock(env.shared, L.peActor(this.id), this.clock.nowPs);
    const states = actorStates(env.shared, env.machine);
    const stopped = new RunStoppedError('ERR_VIRTUAL_TIME_LIMIT', `stopped: kernel '${kernel}' on ${env.machine.describePe(this.id)}: ${limit.message}`, states.summary, states.actors);
    const report = serializeError(stopped);
    report.stack = undefined;
    abortSession(env.shared, ABORT_KIND.STOPPED, report);
    return stopped;
  }
}

function isVirtualTimeLimit(e: unknown): e is KernbenchError {
  return e instanceof KernbenchError && e.code === 'ERR_VIRTUAL_TIME_LIMIT' && !(e instanceof RunStoppedError);
}

/**
 * Kernel modules already imported on this thread. import() of a loaded module
 * still walks the ESM loader (resolve, module map, a job) on every launch;
 * measured ~3 % of a 64-rank all-reduce under --threads 1.
 */
const modules = new Map<string, Record<string, unknown>>();

async function importKernel(cmd: LaunchCommand): Promise<Kernel<unknown[]>> {
  let mod = modules.get(cmd.kernel.module);
  if (!mod) {
    mod = await importModule(cmd.kernel.module);
    modules.set(cmd.kernel.module, mod);
  }
  const k = mod[cmd.kernel.exportName];
  if (!isKernel(k)) {
    throw new KernbenchError('ERR_NOT_EXPORTED', `kernel '${cmd.name}' must be exported as '${cmd.kernel.exportName}' from ${cmd.kernel.module} (made with defineKernel), got ${typeof k}`);
  }
  return k;
}

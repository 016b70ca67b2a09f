// Runs on: any thread that launches kernels (producer) and executor threads
// (consumer). Owns: the per-executor command queue in the `cmd` SharedArrayBuffer
// through which hosts launch kernels onto PEs of other threads without
// postMessage (DESIGN §3).
//
// Multi-producer, single-consumer, S = layout.cmdSlots slots per executor:
//   producer: n = Atomics.add(reserve, 1)          claim command n (slot n mod S)
//             wait until head >= n - S + 1  (the slot is free)
//             write length + JSON into the slot
//             Atomics.store(seq[slot], n + 1)       publish; ring the executor
//   consumer: wait until seq[head mod S] >= head + 1, read, then
//             Atomics.store(head, head + 1)
// reserve > head means a command is in flight: the deadlock detector counts
// that as progress still possible. HEADER.COMMANDS_IN_FLIGHT covers every
// queue's reserve > head at once: bumped before the reserve, dropped after the
// head moves (and before the coordinator is rung for a grant it may now make).
import { KernbenchError } from '../errors.js';
import type { KernelRef } from '../kernel/define.js';
import type { Ports } from '../kernel/ports.js';
import { CMD_SLOT_BYTES, EXEC, HEADER, WAIT_KIND } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';
import { NO_ACTOR, type Scheduler } from '../sync/scheduler.js';
import { ringCoordinator } from '../sync/wake.js';

/** The one command kind: run a kernel on a PE. */
export interface LaunchCommand {
  type: 'launch';
  pe: number;
  /** The PE's launch sequence number (a ticket): unordered kernels on a PE run in this order. */
  seq: number;
  /**
   * Launched onto a PE shared by the hosts of a spawn: run in (startPs, host, seq) order once
   * admitted (./admission.ts), not in ticket order. False for every other launch (the fast path).
   */
  ordered: boolean;
  /** The launching host (a rank, or the main host's index): the tie-break key of an ordered launch. */
  host: number;
  /** Executor of the launching host: it is woken when the kernel finishes. */
  hostExecutor: number;
  kernel: KernelRef;
  name: string;
  args: unknown[];
  /** Where this PE's sends go and its receives come from, resolved by the host. */
  ports: Ports;
  rank: number;
  /** Host virtual time at launch: the kernel starts no earlier. */
  startPs: number;
  /** Collective sequence number, or -1 for a plain launch. */
  tag: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export async function postCommand(sh: SharedState, sched: Scheduler, actor: number, executor: number, cmd: LaunchCommand): Promise<void> {
  const L = sh.layout;
  const bytes = encoder.encode(JSON.stringify(cmd));
  if (bytes.length + 4 > CMD_SLOT_BYTES) {
    throw new KernbenchError('ERR_LAUNCH_ARGS_TOO_LARGE', `launch of '${cmd.name}': its arguments encode to ${bytes.length} bytes, more than a command slot holds (${CMD_SLOT_BYTES - 4}), got ${bytes.length} bytes`);
  }
  Atomics.add(sh.ctl, HEADER.COMMANDS_IN_FLIGHT, 1);
  const n = Atomics.add(sh.ctl, L.exec(executor, EXEC.CMD_RESERVE), 1);
  if (n >= L.cmdSlots) await sched.waitUntil(actor, L.exec(executor, EXEC.CMD_HEAD), n - L.cmdSlots + 1, WAIT_KIND.COMMAND, executor, 0);
  const slot = n % L.cmdSlots;
  const off = L.cmdPayloadOffset(executor, slot);
  new DataView(sh.buffers.cmd).setUint32(off, bytes.length, true);
  sh.cmd.set(bytes, off + 4);
  const seqWord = L.cmdSeq(executor, slot);
  Atomics.store(sh.ctl, seqWord, n + 1);
  sched.publish(seqWord, executor);
}

/** Consumer side of one executor's queue. */
export class CommandReader {
  private head: number;

  constructor(
    private readonly sh: SharedState,
    private readonly sched: Scheduler,
    private readonly executor: number,
  ) {
    this.head = Atomics.load(sh.ctl, sh.layout.exec(executor, EXEC.CMD_HEAD));
  }

  /** Wait for the next command. Call `commit()` once it has been handed to its PE. */
  async next(): Promise<{ cmd: LaunchCommand; commit: () => void }> {
    const L = this.sh.layout;
    const slot = this.head % L.cmdSlots;
    await this.sched.waitUntil(NO_ACTOR, L.cmdSeq(this.executor, slot), this.head + 1, WAIT_KIND.COMMAND, 0, 0);
    const off = L.cmdPayloadOffset(this.executor, slot);
    const len = new DataView(this.sh.buffers.cmd).getUint32(off, true);
    const cmd = JSON.parse(decoder.decode(this.sh.cmd.slice(off + 4, off + 4 + len))) as LaunchCommand;
    return {
      cmd,
      commit: () => {
        this.head++;
        const w = L.exec(this.executor, EXEC.CMD_HEAD);
        Atomics.store(this.sh.ctl, w, this.head);
        Atomics.sub(this.sh.ctl, HEADER.COMMANDS_IN_FLIGHT, 1);
        this.sched.signal(w);
        // A command in flight holds back every memory grant (lib/coordinator/arbiter.ts): its end may release one.
        if (Atomics.load(this.sh.ctl, HEADER.GRANTS_PENDING) > 0 || Atomics.load(this.sh.ctl, HEADER.FLOWS_PENDING) > 0 || Atomics.load(this.sh.ctl, HEADER.HELD_PENDING) > 0) ringCoordinator(this.sh.ctl);
        // A producer may be waiting for this slot (the queue was full); it may be on any thread.
        if (Atomics.load(this.sh.ctl, L.exec(this.executor, EXEC.CMD_RESERVE)) >= this.head + L.cmdSlots) {
          for (let e = 0; e <= L.dims.executors; e++) if (e !== this.executor) this.sched.ring(e);
        }
      },
    };
  }
}

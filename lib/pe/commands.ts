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
//
// A host on the executor's own thread (a spawned rank, under any layout but the main
// host's) leaves the slot's bytes empty and hands the command over in this thread's
// memory instead, as the reader would have parsed it (decision 0283): JSON's copy of
// the arguments (plain data copied as it is, decision 0284), and the same refusal when the
// command would not fit a slot. Reserve, wait, publish and the wake-ups are the same.
import { KernbenchError, utf8Bytes } from '../errors.js';
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
const NO_BYTES = new Uint8Array(0);

/** Commands posted on this thread for its own executor, by reservation number, until its reader takes them: a session's (its SharedState's) each. */
const handedOver = new WeakMap<SharedState, Map<number, LaunchCommand>>();

/** Post `cmd` to `executor`'s queue: as bytes, or handed over in memory when `executor` is this thread's. */
export async function postCommand(sh: SharedState, sched: Scheduler, actor: number, executor: number, cmd: LaunchCommand): Promise<void> {
  const L = sh.layout;
  const local = executor === sched.executor;
  let bytes = NO_BYTES;
  if (local) {
    // What the reader would have parsed: a copy of the arguments, JSON's, not the caller's
    // objects. Plain data, which JSON gives back unchanged, is copied as it is.
    const bound = { bytes: 0 };
    const plain = plainCopy(cmd.args, bound);
    let argsBytes: number;
    if (plain === NOT_PLAIN) {
      const json = JSON.stringify(cmd.args);
      cmd.args = JSON.parse(json) as unknown[];
      argsBytes = utf8Bytes(json);
    } else {
      cmd.args = plain as unknown[];
      argsBytes = bound.bytes;
    }
    // A bound first: the command's whole JSON only when the bound does not show that it fits.
    if (4 + commandBytesBound(cmd, argsBytes) > CMD_SLOT_BYTES) checkFits(cmd, encoder.encode(JSON.stringify(cmd)).length);
  } else {
    bytes = encoder.encode(JSON.stringify(cmd));
    checkFits(cmd, bytes.length);
  }
  Atomics.add(sh.ctl, HEADER.COMMANDS_IN_FLIGHT, 1);
  const n = Atomics.add(sh.ctl, L.exec(executor, EXEC.CMD_RESERVE), 1);
  if (n >= L.cmdSlots) await sched.waitUntil(actor, L.exec(executor, EXEC.CMD_HEAD), n - L.cmdSlots + 1, WAIT_KIND.COMMAND, executor, 0);
  const slot = n % L.cmdSlots;
  const off = L.cmdPayloadOffset(executor, slot);
  if (local) {
    let m = handedOver.get(sh);
    if (m === undefined) handedOver.set(sh, (m = new Map()));
    m.set(n, cmd);
  }
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

  /** The command in slot `slot`, from its bytes. */
  private read(slot: number): LaunchCommand {
    const off = this.sh.layout.cmdPayloadOffset(this.executor, slot);
    const len = new DataView(this.sh.buffers.cmd).getUint32(off, true);
    return JSON.parse(decoder.decode(this.sh.cmd.slice(off + 4, off + 4 + len))) as LaunchCommand;
  }

  /** Wait for the next command. Call `commit()` once it has been handed to its PE. */
  async next(): Promise<{ cmd: LaunchCommand; commit: () => void }> {
    const L = this.sh.layout;
    const slot = this.head % L.cmdSlots;
    await this.sched.waitUntil(NO_ACTOR, L.cmdSeq(this.executor, slot), this.head + 1, WAIT_KIND.COMMAND, 0, 0);
    // Posted on this thread without bytes (postCommand), or read from the slot.
    const mine = handedOver.get(this.sh);
    const cmd = mine?.get(this.head) ?? this.read(slot);
    mine?.delete(this.head);
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

/** ERR_LAUNCH_ARGS_TOO_LARGE unless a command whose JSON is `bytes` bytes fits a slot. */
function checkFits(cmd: LaunchCommand, bytes: number): void {
  if (bytes + 4 > CMD_SLOT_BYTES) {
    throw new KernbenchError('ERR_LAUNCH_ARGS_TOO_LARGE', `launch of '${cmd.name}': its arguments encode to ${bytes} bytes, more than a command slot holds (${CMD_SLOT_BYTES - 4}), got ${bytes} bytes`);
  }
}

/**
 * At least the UTF-8 bytes of JSON.stringify(cmd), whose args encode to `argsBytes`:
 * the rest is the runtime's plain data, bounded value by value (jsonBytesBound).
 */
export function commandBytesBound(cmd: LaunchCommand, argsBytes: number): number {
  let n = 2;
  for (const k in cmd) n += 4 + 6 * k.length + (k === 'args' ? argsBytes : jsonBytesBound(cmd[k as keyof LaunchCommand]));
  return n;
}

/**
 * At least the UTF-8 bytes of JSON.stringify(v) for plain data (numbers, booleans,
 * strings, and arrays and plain objects of them): a number at most 24 characters
 * ("-2.2250738585072014e-308"), a string at most 6 bytes a UTF-16 unit (an escape,
 * "\u001f") and its quotes, a key the same and its colon and comma. Anything else (a
 * bigint, a function, an object of a class, which may have toJSON) is not bounded:
 * Infinity, so the caller encodes the command to know. No allocation: it runs for every
 * command a thread hands over itself.
 */
export function jsonBytesBound(v: unknown): number {
  if (typeof v === 'string') return 2 + 6 * v.length;
  if (typeof v === 'number') return 24;
  if (typeof v === 'boolean' || v === undefined) return 5;
  if (v === null) return 4;
  if (Array.isArray(v)) {
    let n = 2;
    for (let i = 0; i < v.length; i++) n += jsonBytesBound(v[i]) + 1;
    return n;
  }
  if (typeof v !== 'object' || (v as object).constructor !== Object) return Infinity;
  let n = 2;
  for (const k in v) n += 4 + 6 * k.length + jsonBytesBound((v as Record<string, unknown>)[k]);
  return n;
}

/** plainCopy's answer for a value JSON would change (or might: a class's object may have toJSON). */
export const NOT_PLAIN = Symbol('not plain');

/**
 * A copy of `v` equal to JSON.parse(JSON.stringify(v)) when `v` is data JSON gives back
 * unchanged: strings, booleans, null, finite numbers other than -0, and dense arrays and
 * plain objects (own enumerable string keys, not "__proto__") of them; else NOT_PLAIN,
 * and the caller goes through JSON. With `bound`, adds jsonBytesBound of the copy to
 * `bound.bytes` on the way (the copy's walk is the bound's: one walk, not two).
 */
export function plainCopy(v: unknown, bound: { bytes: number } = { bytes: 0 }): unknown {
  if (typeof v === 'string') {
    bound.bytes += 2 + 6 * v.length;
    return v;
  }
  if (typeof v === 'boolean') {
    bound.bytes += 5;
    return v;
  }
  if (v === null) {
    bound.bytes += 4;
    return v;
  }
  if (typeof v === 'number') {
    bound.bytes += 24;
    return Number.isFinite(v) && !Object.is(v, -0) ? v : NOT_PLAIN;
  }
  if (typeof v !== 'object') return NOT_PLAIN;
  bound.bytes += 2;
  if (Array.isArray(v)) {
    if (v.constructor !== Array) return NOT_PLAIN;
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return NOT_PLAIN;
      const c = plainCopy(v[i], bound);
      if (c === NOT_PLAIN) return NOT_PLAIN;
      out[i] = c;
      bound.bytes += 1;
    }
    return out;
  }
  if ((v as object).constructor !== Object) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const k in v) {
    if (k === '__proto__' || !Object.hasOwn(v, k)) return NOT_PLAIN;
    bound.bytes += 4 + 6 * k.length;
    const c = plainCopy((v as Record<string, unknown>)[k], bound);
    if (c === NOT_PLAIN) return NOT_PLAIN;
    out[k] = c;
  }
  return out;
}

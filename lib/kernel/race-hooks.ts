// Runs on: executor threads. Owns: what a kernel's `tl` tells the data-race
// checker of --check-races (lib/race/log.ts): its loads and stores, its scratch
// tensors (left out of the check), and the orderings its sends and receives
// make. Chosen once per `tl` (raceHooksFor): with the check off, every hook is
// a no-op and computes nothing.
import { bytesPerElement, type DType } from '../dtype/index.js';
import { pieceCount } from '../ipcq/channel-queue.js';
import { raceLog } from '../race/log.js';
import type { ShardDesc, TensorDesc } from '../shm/tensor-desc.js';
import type { ThreadEnv } from '../sync/thread-env.js';

export interface RaceHooks {
  /** A load (`write` false) or store of elements [offset, offset + count) of shard `s` of `t`, at `atPs`. */
  access(write: boolean, t: TensorDesc, s: ShardDesc, offset: number, count: number, atPs: number): void;
  /** `t` is scratch: the check leaves it out, since a PE's next kernel reuses its TCM. */
  scratch(t: TensorDesc): void;
  /** A send of `elements` of `dtype` in direction `dir` on channel set `set`: what the kernel did so far happens before the receiver takes them. */
  send(dir: number, set: number, dtype: DType, elements: number): void;
  /** A receive of `elements` of `dtype` from PE `sender`'s direction `senderDir` on channel set `set` issued: the keys to acquire once it is in (null with the check off). */
  receive(sender: number, senderDir: number, set: number, dtype: DType, elements: number): string[] | null;
  /** A receive's values are in: its sender's past happens before what the kernel does next. */
  received(keys: string[] | null): void;
}

const OFF: RaceHooks = {
  access() {},
  scratch() {},
  send() {},
  receive: () => null,
  received() {},
};

/** Scratch tensors of this thread's kernels (the check leaves them out). */
const scratchDescs = new WeakSet<TensorDesc>();

class RaceRecorder implements RaceHooks {
  constructor(
    private readonly env: ThreadEnv,
    private readonly pe: number,
  ) {}

  access(write: boolean, t: TensorDesc, s: ShardDesc, offset: number, count: number, atPs: number): void {
    if (scratchDescs.has(t)) return;
    raceLog.access(raceLog.kernelOn(this.pe), write, t.name, s, bytesPerElement(t.dtype), offset, count, atPs);
  }

  scratch(t: TensorDesc): void {
    scratchDescs.add(t);
  }

  send(dir: number, set: number, dtype: DType, elements: number): void {
    raceLog.send(this.pe, this.env.shared.layout.ringOf(this.pe, dir, set), pieceCount(this.env.plan.ccl.vc_chunk_size, dtype, elements));
  }

  receive(sender: number, senderDir: number, set: number, dtype: DType, elements: number): string[] {
    return raceLog.receive(this.env.shared.layout.ringOf(sender, senderDir, set), pieceCount(this.env.plan.ccl.vc_chunk_size, dtype, elements));
  }

  received(keys: string[] | null): void {
    if (keys) raceLog.acquire(raceLog.kernelOn(this.pe), keys);
  }
}

/** The hooks for a kernel on PE `pe`: recording when this thread's session checks races, else no-ops. */
export function raceHooksFor(env: ThreadEnv, pe: number): RaceHooks {
  return raceLog.on ? new RaceRecorder(env, pe) : OFF;
}

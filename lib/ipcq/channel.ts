// Runs on: executor threads. Owns: a PE's DMA channels — one outbound and one
// inbound per direction — which carry IPCQ transfers in the background of the
// kernel, each on its own virtual timeline. This is where IPCQ timing lives.
//
// A channel runs its operations one at a time in issue order (a FIFO chain), so
// the sequence of ring operations on every ring is fixed by the program alone:
// each ring is a Kahn channel and the run is deterministic however threads
// interleave (docs/determinism.md).
//
// Outbound, piece i of a payload (pieces of vc_chunk_size bytes):
//   credit_i  = freed time of message (k - n_slots) + credit latency   (k >= n_slots)
//   start_i   = max(channel clock, issue time, credit_i) + dma setup
//   channel clock = start_i + bytes_i / beta            (the link is busy until then)
//   arrival_i = channel clock + hops * alpha            (cut-through)
// Inbound, piece i:
//   channel clock = max(channel clock, issue time, arrival_i) + staging read(bytes_i)
//   freed_i   = channel clock                            (the credit leaves then)
// On the ideal topology (no setup, free memory) a payload of S bytes over one hop
// costs exactly alpha + S/beta, whatever the cut — the alpha-beta law.
import { ACTOR_STATE, PE, WAIT_KIND, ringId } from '../shm/layout.js';
import type { ThreadEnv } from '../runtime/thread-env.js';
import { IpcqRingView } from './ring.js';

/** A channel operation: its completion virtual time once settled. */
export class ChannelOp<T> {
  settled = false;
  value: T | undefined;
  error: unknown;
  readonly promise: Promise<T>;

  constructor(
    readonly channel: number,
    /** Index among the channel's operations; the channel's CHAN_DONE counter passes index + 1 when it settles. */
    readonly index: number,
    run: () => Promise<T>,
    after: Promise<unknown>,
  ) {
    this.promise = after.then(run).then(
      (v) => {
        this.settled = true;
        this.value = v;
        return v;
      },
      (e: unknown) => {
        this.settled = true;
        this.error = e;
        throw e;
      },
    );
    // The kernel observes failures when it waits or drains; never an unhandled rejection.
    this.promise.catch(() => undefined);
  }
}

export interface Received {
  bytes: Uint8Array;
  donePs: number;
}

abstract class Channel {
  /** The channel's own virtual timeline (ps). */
  clockPs = 0;
  protected tail: Promise<unknown> = Promise.resolve();
  protected issued: number;
  protected readonly actor: number;
  readonly doneWord: number;

  constructor(
    protected readonly env: ThreadEnv,
    readonly pe: number,
    /** 0..3 outbound by direction, 4..7 inbound. */
    readonly channel: number,
  ) {
    const L = env.shared.layout;
    this.actor = L.channelActor(pe, channel);
    this.doneWord = L.pe(pe, PE.CHAN_DONE + channel);
    this.issued = Atomics.load(env.shared.ctl, this.doneWord);
  }

  get pending(): boolean {
    return Atomics.load(this.env.shared.ctl, this.doneWord) < this.issued;
  }

  protected enqueue<T>(run: () => Promise<T>): ChannelOp<T> {
    const sched = this.env.sched;
    const op = new ChannelOp<T>(
      this.channel,
      this.issued++,
      async () => {
        sched.setState(this.actor, ACTOR_STATE.RUNNING);
        try {
          return await run();
        } finally {
          Atomics.add(this.env.shared.ctl, this.doneWord, 1);
          sched.setState(this.actor, ACTOR_STATE.IDLE);
        }
      },
      this.tail,
    );
    this.tail = op.promise.catch(() => undefined);
    return op;
  }
}

export class OutboundChannel extends Channel {
  private readonly ring: IpcqRingView;
  private seq: number;

  constructor(env: ThreadEnv, pe: number, dir: number) {
    super(env, pe, dir);
    this.ring = new IpcqRingView(env.shared, ringId(pe, dir));
    this.seq = Atomics.load(env.shared.ctl, this.ring.tailWord);
  }

  /** Send `payload` to PE `peer`; resolves with the time the last byte left the link. */
  send(peer: number, payload: Uint8Array, issuePs: number): ChannelOp<number> {
    return this.enqueue(() => this.run(peer, payload, issuePs));
  }

  private async run(peer: number, payload: Uint8Array, issuePs: number): Promise<number> {
    const { env, ring } = this;
    const { costs, sched, plan } = env;
    const nSlots = ring.nSlots;
    const piece = plan.ccl.vc_chunk_size;
    const n = payload.length;
    const pieces = Math.max(1, Math.ceil(n / piece));
    const credit = costs.transfer(peer, this.pe, plan.ccl.ipcq_credit_size_bytes);
    const creditPs = credit.serialPs + credit.flightPs;
    const consumer = plan.peExecutor[peer];
    let t = Math.max(this.clockPs, issuePs);
    for (let i = 0; i < pieces; i++) {
      const k = this.seq;
      const b = Math.min(piece, n - i * piece);
      if (k >= nSlots) {
        await sched.waitUntil(this.actor, ring.headWord, k - nSlots + 1, WAIT_KIND.IPCQ_CREDIT, ring.ring, t);
        t = Math.max(t, ring.freedPs(k - nSlots) + creditPs);
      }
      const c = costs.transfer(this.pe, peer, b);
      t += costs.dmaSetupPs + c.serialPs;
      if (sched.jitter) await sched.jitter.point();
      ring.write(k, payload, i * piece, b, { arrivalPs: t + c.flightPs, sender: this.pe, receiver: peer });
      this.seq = k + 1;
      env.stats.messages++;
      sched.publish(ring.tailWord, consumer);
    }
    this.clockPs = t;
    return t;
  }
}

export class InboundChannel extends Channel {
  constructor(env: ThreadEnv, pe: number, dir: number) {
    super(env, pe, 4 + dir);
  }

  /** Receive `nbytes` from `sender` (which sends in direction `senderDir`); resolves with the bytes and the time they are in. */
  recv(sender: number, senderDir: number, nbytes: number, issuePs: number): ChannelOp<Received> {
    return this.enqueue(() => this.run(sender, senderDir, nbytes, issuePs));
  }

  private async run(sender: number, senderDir: number, nbytes: number, issuePs: number): Promise<Received> {
    const { env } = this;
    const { costs, sched, plan, shared } = env;
    const ring = new IpcqRingView(shared, ringId(sender, senderDir));
    const producer = plan.peExecutor[sender];
    const out = new Uint8Array(nbytes);
    const staging = plan.ccl.buffer_kind;
    let t = Math.max(this.clockPs, issuePs);
    let got = 0;
    do {
      const k = Atomics.load(shared.ctl, ring.headWord);
      await sched.waitUntil(this.actor, ring.tailWord, k + 1, WAIT_KIND.IPCQ_DATA, ring.ring, t);
      const h = ring.header(k, sender, this.pe);
      if (got + h.bytes > nbytes) {
        throw new RangeError(`IPCQ receive of ${nbytes} bytes from ${env.machine.describePe(sender)}: the sender sent more, got a piece of ${h.bytes} bytes after ${got}`);
      }
      t = Math.max(t, h.arrivalPs) + costs.memoryPs(staging, h.bytes);
      ring.read(k, h.bytes, out, got);
      got += h.bytes;
      if (sched.jitter) await sched.jitter.point();
      ring.free(k, t);
      sched.publish(ring.headWord, producer);
    } while (got < nbytes);
    this.clockPs = t;
    return { bytes: out, donePs: t };
  }
}

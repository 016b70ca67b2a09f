// Runs on: main (the bench driver and the copy ceiling); the cross-thread loops
// run on two worker threads (benches/ipcq/ipcq-worker.ts). The ipcq_throughput
// evaluation bench: in one run, for 64 B and 64 KiB payloads, it measures
//   ipcq         a producer and a consumer thread exchanging messages through a
//                real IPCQ ring (SharedState + lib/ipcq/ring.ts), spin-then-park;
//                once with the consumer handing back a batch of slots with one
//                head store (the headline; channel.ts's fast path), once per
//                slot (channel.ts's piece-by-piece path);
//   postMessage  the same stream as structured-clone copies over a MessagePort
//                between the two workers, with a flow-control window;
//   copy         the in-thread ceiling: TypedArray.set between two SAB regions;
// and prints IPCQ / postMessage (messages/s) and IPCQ / copy ceiling (bytes/s).
// Every message carries its sequence number (benches/ipcq/payload.ts); a result
// is not ok if any message arrived corrupted. DESIGN §8 lists what to expect.
import { availableParallelism, loadavg } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import type { BenchContext, BenchResult } from '../lib/bench/contract.js';
import { defineBench } from '../lib/bench/define.js';
import { dirIndex, ringId, type LayoutDims } from '../lib/shm/layout.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { BenchWorker } from './ipcq/bench-worker.js';
import type { RunSpec } from './ipcq/messages.js';
import { fillPattern, stamp, stampMatches, words } from './ipcq/payload.js';

export default defineBench({
  description: 'IPCQ ring vs postMessage vs the TypedArray.set copy ceiling, producer and consumer threads, 64 B and 64 KiB messages',
  evaluate,
});

const COMMAND = 'node bin/kernbench.js run --bench ipcq_throughput';

const PAYLOAD_SIZES = [64, 64 * 1024];
const N_SLOTS = 64;
/** Atomics.load iterations before a waiter parks (~tens of µs, of the order of one park/wake: DESIGN §8). */
const SPIN = 20_000;
/** Batched consumer: store head once per this many slots read (or when the ring is drained). */
const FREE_BATCH = N_SLOTS / 4;
/** postMessage flow control: bytes in flight before the producer waits, and acknowledgements per window. */
const POST_WINDOW_BYTES = 16 * 1024 * 1024;
const POST_ACKS_PER_WINDOW = 4;
/** A timed run lasts about this long; warm-up grows the count until a run takes CALIBRATE_S. Best of REPEATS. */
const TARGET_S = 0.5;
const CALIBRATE_S = 0.1;
const REPEATS = 3;
/** Arena regions (producer src, consumer dst, copy src, copy dst) start this far apart. */
const REGION_ALIGN = 4096;

const SENDER_PE = 0;
const RECEIVER_PE = 1;

interface Sample {
  ns: number;
  corrupt: number;
  parks: number;
}

interface Measured {
  count: number;
  /** The fastest of REPEATS timed runs. */
  best: Sample;
  /** Corrupted messages over every run, warm-up included. */
  corrupt: number;
  msgsPerS: number;
  bytesPerS: number;
}

type Runner = (count: number) => Promise<Sample>;

interface Contender {
  /** Messages in the first warm-up run. */
  firstCount: number;
  run: Runner;
}

/** Warm up, growing the count until a run takes CALIBRATE_S; return a count sized for TARGET_S. */
async function calibrate(c: Contender): Promise<{ count: number; corrupt: number }> {
  let count = c.firstCount;
  let s = await c.run(count);
  let corrupt = s.corrupt;
  while (s.ns < CALIBRATE_S * 1e9) {
    count *= 4;
    s = await c.run(count);
    corrupt += s.corrupt;
  }
  // Size from the faster of two runs: on a shared machine one slow run would shrink every timed run.
  const again = await c.run(count);
  corrupt += again.corrupt;
  return { count: Math.max(1, Math.round((count * TARGET_S * 1e9) / Math.min(s.ns, again.ns))), corrupt };
}

/**
 * Calibrate every contender, then time them round-robin, REPEATS rounds, and
 * keep each one's fastest run. Interleaving gives every contender the same
 * stretch of a shared machine, so a burst of outside load does not land on
 * one side of a ratio only.
 */
async function measureAll(size: number, contenders: Contender[]): Promise<Measured[]> {
  const sized: { count: number; corrupt: number; best: Sample | undefined }[] = [];
  for (const c of contenders) sized.push({ ...(await calibrate(c)), best: undefined });
  for (let r = 0; r < REPEATS; r++) {
    for (let i = 0; i < contenders.length; i++) {
      const m = sized[i];
      const s = await contenders[i].run(m.count);
      m.corrupt += s.corrupt;
      if (!m.best || s.ns < m.best.ns) m.best = s;
    }
  }
  return sized.map(({ count, corrupt, best }) => {
    if (!best) throw new Error(`ipcq_throughput: REPEATS must be at least 1, got ${REPEATS}`);
    const msgsPerS = (count * 1e9) / best.ns;
    return { count, best, corrupt, msgsPerS, bytesPerS: msgsPerS * size };
  });
}

function dimsFor(size: number): LayoutDims {
  const region = Math.ceil(size / REGION_ALIGN) * REGION_ALIGN;
  return { executors: 2, pes: 2, hosts: 1, nSlots: N_SLOTS, slotSize: size, cubes: 1, arenaBytes: 4 * region };
}

/** A run starts when the producer starts sending (nothing can arrive earlier) and ends when the consumer has checked the last message. */
function elapsed(producer: { startNs: number }, consumer: { endNs: number }): number {
  return consumer.endNs - producer.startNs;
}

/**
 * Attach both workers to one fresh ring for `size` (a worker holds one ring at a
 * time). The returned factory makes runners, one per consumer free policy, that
 * share the ring's sequence: its counters only go up, so each run continues it.
 */
async function attachRing(prod: BenchWorker, cons: BenchWorker, size: number): Promise<(freeEvery: number) => Runner> {
  const dims = dimsFor(size);
  const sh = SharedState.create(dims);
  const region = dims.arenaBytes / 4;
  const ring = ringId(SENDER_PE, dirIndex('east'));
  const common = { dims, buffers: sh.buffers, ring, sender: SENDER_PE, receiver: RECEIVER_PE };
  prod.send({ type: 'attach-ring', ...common, arenaOffset: 0 });
  cons.send({ type: 'attach-ring', ...common, arenaOffset: region });
  await Promise.all([prod.next('attached'), cons.next('attached')]);
  let base = 0;
  return (freeEvery) => async (count) => {
    const spec: RunSpec = { base, count, size };
    base += count;
    cons.send({ type: 'ipcq-consume', ...spec, spin: SPIN, freeEvery });
    prod.send({ type: 'ipcq-produce', ...spec, spin: SPIN });
    const [p, c] = await Promise.all([prod.next('run-done'), cons.next('run-done')]);
    return { ns: elapsed(p, c), corrupt: c.corrupt, parks: p.parks + c.parks };
  };
}

async function postRunner(prod: BenchWorker, cons: BenchWorker, size: number): Promise<Runner> {
  const { port1, port2 } = new MessageChannel();
  prod.send({ type: 'attach-port', port: port1 }, [port1]);
  cons.send({ type: 'attach-port', port: port2 }, [port2]);
  await Promise.all([prod.next('attached'), cons.next('attached')]);
  const window = postWindow(size);
  let base = 0;
  return async (count) => {
    const spec: RunSpec = { base, count, size };
    base += count;
    cons.send({ type: 'post-consume', ...spec, ackEvery: Math.max(1, window / POST_ACKS_PER_WINDOW) });
    await cons.next('armed');
    prod.send({ type: 'post-produce', ...spec, window });
    const [p, c] = await Promise.all([prod.next('run-done'), cons.next('run-done')]);
    return { ns: elapsed(p, c), corrupt: c.corrupt, parks: 0 };
  };
}

function postWindow(size: number): number {
  return Math.min(4096, Math.max(16, Math.floor(POST_WINDOW_BYTES / size)));
}

/** The in-thread ceiling: each message is one TypedArray.set between two regions of a SharedArrayBuffer, checked like the others. */
function copyRunner(size: number): Runner {
  const dims = dimsFor(size);
  const sh = SharedState.create(dims);
  const region = dims.arenaBytes / 4;
  const src = sh.arena.subarray(2 * region, 2 * region + size);
  const dst = sh.arena.subarray(3 * region, 3 * region + size);
  fillPattern(src);
  const ws = words(src);
  const wd = words(dst);
  let base = 0;
  return (count) => {
    const start = process.hrtime.bigint();
    let corrupt = 0;
    for (let seq = base; seq < base + count; seq++) {
      stamp(ws, seq);
      dst.set(src);
      if (!stampMatches(wd, seq)) corrupt++;
    }
    const ns = Number(process.hrtime.bigint() - start);
    base += count;
    return Promise.resolve({ ns, corrupt, parks: 0 });
  };
}

function fmtSize(b: number): string {
  return b >= 1024 ? `${b / 1024} KiB` : `${b} B`;
}

function fmtRate(name: string, m: Measured): string {
  const msgs = m.msgsPerS >= 1e6 ? `${(m.msgsPerS / 1e6).toFixed(2)} M` : `${(m.msgsPerS / 1e3).toFixed(1)} k`;
  return `  ${name.padEnd(26)}${msgs.padStart(8)} msgs/s ${(m.bytesPerS / 1e9).toFixed(2).padStart(6)} GB/s  (${m.count} msgs in ${(m.best.ns / 1e6).toFixed(0)} ms, parks ${m.best.parks})`;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** The targets: >= 15x postMessage messages/s at 64 B, >= 0.8 of the copy ceiling (bytes/s) at 64 KiB. */
const TARGETS: Record<number, { ratio: 'post' | 'copy'; atLeast: number }> = {
  64: { ratio: 'post', atLeast: 15 },
  [64 * 1024]: { ratio: 'copy', atLeast: 0.8 },
};

async function measureSize(ctx: BenchContext, prod: BenchWorker, cons: BenchWorker, size: number): Promise<BenchResult> {
  const loadBefore = loadavg()[0];
  const small = size <= 1024;
  const first = small ? 100_000 : 2_000;
  ctx.log(`ipcq_throughput: ${fmtSize(size)} messages: ipcq batched free, ipcq per-slot free, postMessage, copy ceiling (warm-up, then ${REPEATS} interleaved rounds)`);
  const ipcqRunner = await attachRing(prod, cons, size);
  const [ipcq, perSlot, post, copy] = await measureAll(size, [
    { firstCount: first, run: ipcqRunner(FREE_BATCH) },
    { firstCount: first, run: ipcqRunner(1) },
    { firstCount: small ? 10_000 : 500, run: await postRunner(prod, cons, size) },
    { firstCount: first, run: copyRunner(size) },
  ]);
  const loadAfter = loadavg()[0];

  // The headline is the batched consumer (channel.ts's fast path); per-slot free (its piece-by-piece path) is shown alongside.
  const ratio = { post: ipcq.msgsPerS / post.msgsPerS, copy: ipcq.bytesPerS / copy.bytesPerS };
  const perSlotRatio = { post: perSlot.msgsPerS / post.msgsPerS, copy: perSlot.bytesPerS / copy.bytesPerS };
  const target = TARGETS[size] as (typeof TARGETS)[number] | undefined;
  const verdict = (which: 'post' | 'copy'): string =>
    target?.ratio === which ? `   target >= ${target.atLeast}${which === 'post' ? 'x' : ''}: ${ratio[which] >= target.atLeast ? 'met' : 'MISSED'}` : '';
  const corrupt = ipcq.corrupt + perSlot.corrupt + post.corrupt + copy.corrupt;
  const lines = [
    `IPCQ throughput, ${fmtSize(size)} messages (n_slots ${N_SLOTS}, slot_size ${fmtSize(size)}, spin ${SPIN} then park; best of ${REPEATS} interleaved runs of ~${TARGET_S} s):`,
    fmtRate(`ipcq, batched free (${FREE_BATCH})`, ipcq),
    fmtRate('ipcq, per-slot free', perSlot),
    fmtRate(`postMessage (window ${postWindow(size)})`, post),
    fmtRate('copy ceiling (set)', copy),
    `  ipcq / postMessage (msgs/s):   ${ratio.post.toFixed(1)}x  (per-slot free ${perSlotRatio.post.toFixed(1)}x)${verdict('post')}`,
    `  ipcq / copy ceiling (bytes/s): ${ratio.copy.toFixed(2)}  (per-slot free ${perSlotRatio.copy.toFixed(2)})${verdict('copy')}`,
    `  corrupted messages: ${corrupt}; machine: ${availableParallelism()} cores, 1-min load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after (two spinning threads need two idle cores: above ~1 the cross-thread numbers are a floor)`,
    `  reproduce: ${COMMAND}`,
  ];
  return {
    bench: ctx.bench,
    algorithm: 'ipcq',
    topology: 'n/a',
    worldSize: 2,
    nElem: ipcq.count,
    dtype: 'u8',
    ok: corrupt === 0,
    critNs: 0,
    lines,
    extra: {
      payload_bytes: size,
      ipcq_msgs_per_s: Math.round(ipcq.msgsPerS),
      ipcq_gb_per_s: round3(ipcq.bytesPerS / 1e9),
      ipcq_per_slot_free_msgs_per_s: Math.round(perSlot.msgsPerS),
      ipcq_per_slot_free_gb_per_s: round3(perSlot.bytesPerS / 1e9),
      post_msgs_per_s: Math.round(post.msgsPerS),
      post_gb_per_s: round3(post.bytesPerS / 1e9),
      copy_msgs_per_s: Math.round(copy.msgsPerS),
      copy_gb_per_s: round3(copy.bytesPerS / 1e9),
      ratio_ipcq_post_msgs: round3(ratio.post),
      ratio_ipcq_copy_bytes: round3(ratio.copy),
      corrupted_messages: corrupt,
      load_avg_1m_before: round3(loadBefore),
      load_avg_1m_after: round3(loadAfter),
    },
  };
}

async function evaluate(ctx: BenchContext): Promise<BenchResult[]> {
  const prod = new BenchWorker('ipcq-producer');
  const cons = new BenchWorker('ipcq-consumer');
  try {
    const results: BenchResult[] = [];
    for (const size of PAYLOAD_SIZES) results.push(await measureSize(ctx, prod, cons, size));
    return results;
  } finally {
    await Promise.all([prod.terminate(), cons.terminate()]);
  }
}

// Runs on: the ipcq_throughput bench's two worker threads (one producer, one
// consumer); started by benches/ipcq_throughput.ts. Owns: the inner loops of the
// cross-thread measurements —
//   ipcq   the production ring code (lib/ipcq/ring.ts: payload / publish /
//          header / read / setFreed / publishHead, and its want words for
//          wake-ups) over a SharedState ring, waiting by spin-then-park;
//   post   the same message stream as structured-clone copies over a
//          MessagePort between the two workers, flow-controlled by a window.
// Each worker has nothing else to run, so the IPCQ loops block the thread
// (Atomics.wait) instead of yielding to the event loop.
import { parentPort, type MessagePort } from 'node:worker_threads';
import { serializeError } from '../../lib/errors.js';
import { IpcqRingView } from '../../lib/ipcq/ring.js';
import { SharedState } from '../../lib/shm/shared-state.js';
import { unreachable, type FromBenchWorker, type RingAttach, type RunSpec, type ToBenchWorker } from './messages.js';
import { fillPattern, stamp, stampMatches, words } from './payload.js';
import { SpinPark } from './spin-park.js';

const parent = parentPort;
if (!parent) throw new Error('ipcq-worker must run in a worker thread');

function post(m: FromBenchWorker): void {
  parent?.postMessage(m);
}

function nowNs(): number {
  return Number(process.hrtime.bigint());
}

interface AttachedRing {
  a: RingAttach;
  sh: SharedState;
  view: IpcqRingView;
}

let ring: AttachedRing | undefined;
let port: MessagePort | undefined;
/** What the port's messages mean right now: acknowledgements (producer) or payloads (consumer). */
let onPortMessage: ((m: unknown) => void) | undefined;

parent.on('message', (m: ToBenchWorker) => {
  try {
    switch (m.type) {
      case 'attach-ring': {
        const sh = SharedState.attach(m.dims, m.buffers);
        ring = { a: m, sh, view: new IpcqRingView(sh, m.ring) };
        post({ type: 'attached' });
        break;
      }
      case 'attach-port':
        port?.close();
        port = m.port;
        port.on('message', (x: unknown) => onPortMessage?.(x));
        post({ type: 'attached' });
        break;
      case 'ipcq-produce':
        post(ipcqProduce(need(ring, m.type), m, m.spin));
        break;
      case 'ipcq-consume':
        post(ipcqConsume(need(ring, m.type), m, m.spin, m.freeEvery));
        break;
      case 'post-produce':
        void postProduce(need(port, m.type), m, m.window).then(post, fail);
        break;
      case 'post-consume':
        postConsume(need(port, m.type), m, m.ackEvery);
        break;
      default:
        unreachable(m);
    }
  } catch (e) {
    fail(e);
  }
});

function fail(e: unknown): void {
  post({ type: 'failed', error: serializeError(e) });
}

function need<T>(x: T | undefined, what: string): T {
  if (x === undefined) throw new Error(`ipcq-worker: '${what}' before its attach message, got none`);
  return x;
}

/**
 * Sender, as lib/ipcq/channel.ts sends a piece: copy into the slot's payload
 * view, publish (header, then tail), wake the receiver only if it parked for
 * this message. A credit is awaited only when the cached head runs out.
 */
function ipcqProduce(r: AttachedRing, s: RunSpec, spin: number): FromBenchWorker {
  const { sh, view, a } = r;
  const ctl = sh.ctl;
  const park = new SpinPark(ctl, spin);
  const wantCredit = (head: number): void => view.wantCredit(head);
  const src = sh.arena.subarray(a.arenaOffset, a.arenaOffset + s.size);
  fillPattern(src);
  const w = words(src);
  const nSlots = view.nSlots;
  const end = s.base + s.count;
  let freed = Atomics.load(ctl, view.headWord);
  const startNs = nowNs();
  for (let seq = s.base; seq < end; seq++) {
    if (seq - freed >= nSlots) freed = park.waitAtLeast(view.headWord, seq - nSlots + 1, wantCredit);
    stamp(w, seq);
    view.payload(seq, s.size).set(src);
    view.publish(seq, s.size, 0, a.sender, a.receiver);
    if (view.dataWanted(seq, seq + 1)) Atomics.notify(ctl, view.tailWord);
  }
  return { type: 'run-done', startNs, endNs: nowNs(), corrupt: 0, parks: park.parks };
}

/**
 * Receiver, as lib/ipcq/channel.ts receives: check the header, copy the
 * payload out, record the slot's freed time, and hand slots back with
 * publishHead — every `freeEvery` messages, and before waiting, so a drained
 * ring never holds back the sender's credits. freeEvery = 1 is the per-piece
 * path; larger values are the batch path (one head store frees every slot
 * below it: head is a counter).
 */
function ipcqConsume(r: AttachedRing, s: RunSpec, spin: number, freeEvery: number): FromBenchWorker {
  const { sh, view, a } = r;
  const ctl = sh.ctl;
  const park = new SpinPark(ctl, spin);
  const wantData = (tail: number): void => view.wantData(tail - 1);
  const dst = sh.arena.subarray(a.arenaOffset, a.arenaOffset + s.size);
  const w = words(dst);
  const end = s.base + s.count;
  let corrupt = 0;
  let freed = s.base;
  const handBack = (head: number): void => {
    view.publishHead(head);
    if (view.creditWanted(freed, head)) Atomics.notify(ctl, view.headWord);
    freed = head;
  };
  let published = Atomics.load(ctl, view.tailWord);
  const startNs = nowNs();
  for (let seq = s.base; seq < end; seq++) {
    if (seq >= published) {
      if (freed < seq) handBack(seq);
      published = park.waitAtLeast(view.tailWord, seq + 1, wantData);
    }
    const h = view.header(seq, a.sender, a.receiver);
    view.read(seq, h.bytes, dst, 0);
    if (h.bytes !== s.size || !stampMatches(w, seq)) corrupt++;
    view.setFreed(seq, 0);
    if (seq + 1 - freed >= freeEvery) handBack(seq + 1);
  }
  if (freed < end) handBack(end);
  return { type: 'run-done', startNs, endNs: nowNs(), corrupt, parks: park.parks };
}

/** Sender: post copies (structured clone, no transfer) while fewer than `window` are unacknowledged. */
function postProduce(p: MessagePort, s: RunSpec, window: number): Promise<FromBenchWorker> {
  const src = new Uint8Array(s.size);
  fillPattern(src);
  const w = words(src);
  let sent = 0;
  let acked = s.base;
  return new Promise((resolve) => {
    const startNs = nowNs();
    const pump = (): void => {
      while (sent < s.count && s.base + sent - acked < window) {
        stamp(w, s.base + sent);
        p.postMessage(src);
        sent++;
      }
      if (sent === s.count) {
        onPortMessage = undefined;
        resolve({ type: 'run-done', startNs, endNs: nowNs(), corrupt: 0, parks: 0 });
      }
    };
    // Acknowledgements are absolute sequence numbers, so a late one from an earlier run is harmless.
    onPortMessage = (m) => {
      acked = Math.max(acked, m as number);
      pump();
    };
    pump();
  });
}

/** Receiver: check each arriving copy in order; acknowledge (absolute sequence) every `ackEvery`; report after the last. */
function postConsume(p: MessagePort, s: RunSpec, ackEvery: number): void {
  let got = 0;
  let corrupt = 0;
  const startNs = nowNs();
  onPortMessage = (m) => {
    const bytes = m as Uint8Array;
    if (bytes.length !== s.size || !stampMatches(words(bytes), s.base + got)) corrupt++;
    got++;
    if (got % ackEvery === 0) p.postMessage(s.base + got);
    if (got === s.count) {
      onPortMessage = undefined;
      post({ type: 'run-done', startNs, endNs: nowNs(), corrupt, parks: 0 });
    }
  };
  post({ type: 'armed' });
}

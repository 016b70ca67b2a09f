// Runs on: main thread (tap). Covers: the flow-request bitmap (lib/shm/flow-requests.ts)
// by which the link arbiter finds the outbound channels with a new request instead of
// reading every channel's FLOW_REQ word: each mark is taken once, a mark made after a
// take is taken by the next one, candidates come in channel order across bitmap and
// summary words, and a candidate stays until the arbiter has added its request. Then
// the arbiter itself (lib/coordinator/link-arbiter.ts) on a session of 300 PEs: it
// adds the requests of the channels that marked them and no other, and a request whose
// mark it has not taken yet is added by a later pass.
import t from 'tap';
import { LinkArbiter } from '../lib/coordinator/link-arbiter.js';
import { DIR_COUNT, FLOW, HEADER, PE } from '../lib/shm/layout.js';
import { FlowRequestTaker, markFlowRequest } from '../lib/shm/flow-requests.js';
import { SharedState } from '../lib/shm/shared-state.js';
import { coordinatorSession } from './helpers/coordinator-session.js';

function state(pes: number): SharedState {
  return SharedState.create({ executors: 1, pes, hosts: pes, nSlots: 2, slotSize: 64, cubes: pes, arenaBytes: 1024, links: 0 });
}

t.test('marks are taken once each, in channel order, across bitmap and summary words', async (t) => {
  const pes = 600; // 2 400 channels: 75 bitmap words, 3 summary words
  const sh = state(pes);
  const L = sh.layout;
  t.equal(L.flowReqWords, 75);
  t.equal(L.flowReqSummaryWords, 3);
  const taker = new FlowRequestTaker(pes * DIR_COUNT);
  for (const c of [2399, 5, 1024, 31, 32, 1023, 5]) markFlowRequest(sh.ctl, L, c);
  taker.take(sh.ctl, L);
  t.same(taker.candidates(), [5, 31, 32, 1023, 1024, 2399], 'each marked channel once, in order');
  for (let w = 0; w < L.flowReqWords; w++) t.equal(Atomics.load(sh.ctl, L.flowReqWord(w * 32)), 0, `bitmap word ${w} taken`);
  for (let s = 0; s < L.flowReqSummaryWords; s++) t.equal(Atomics.load(sh.ctl, L.flowReqSummaryWord(s * 32)), 0, `summary word ${s} taken`);
  taker.take(sh.ctl, L);
  t.same(taker.candidates(), [5, 31, 32, 1023, 1024, 2399], 'taking again adds nothing');
  taker.keep((c) => c === 1024 || c === 5);
  t.same(taker.candidates(), [5, 1024], 'kept while still pending');
  markFlowRequest(sh.ctl, L, 31);
  markFlowRequest(sh.ctl, L, 5);
  taker.take(sh.ctl, L);
  t.same(taker.candidates(), [5, 31, 1024], 'a mark after the take comes with the next, a kept one is not doubled');
  taker.keep(() => false);
  t.same(taker.candidates(), []);
  markFlowRequest(sh.ctl, L, 1024);
  taker.take(sh.ctl, L);
  t.same(taker.candidates(), [1024], 'a dropped candidate is taken again when it marks again');
});

t.test('a bitmap word marked after its summary bit was taken is found by a later take', async (t) => {
  const sh = state(64);
  const L = sh.layout;
  const taker = new FlowRequestTaker(64 * DIR_COUNT);
  // Channel 40's bit set, its summary bit not yet (the sender is between its two stores): the take finds nothing.
  Atomics.or(sh.ctl, L.flowReqWord(40), 1 << (40 & 31));
  taker.take(sh.ctl, L);
  t.same(taker.candidates(), []);
  // The sender's summary store: the next take has it.
  Atomics.or(sh.ctl, L.flowReqSummaryWord(1), 1 << 1);
  taker.take(sh.ctl, L);
  t.same(taker.candidates(), [40]);
});

t.test('the link arbiter adds the requests whose channels marked them, and only those', async (t) => {
  const { machine, sh } = coordinatorSession(['system.sips.count=300', 'timing.link_sharing=max_min']);
  const L = sh.layout;
  const arbiter = new LinkArbiter(sh, machine);
  const ask = (pe: number, mark: boolean, startPs: number): void => {
    sh.times[L.flow(pe, 0, FLOW.START_PS)] = startPs;
    sh.times[L.flow(pe, 0, FLOW.SERIAL_PS)] = 1000;
    sh.times[L.flow(pe, 0, FLOW.PEER)] = (pe + 1) % 300;
    sh.times[L.flow(pe, 0, FLOW.LATENCY_PS)] = 100;
    sh.times[L.flow(pe, 0, FLOW.JOIN_MIN_PS)] = 0;
    Atomics.add(sh.ctl, HEADER.FLOWS_PENDING, 1);
    Atomics.add(sh.ctl, L.pe(pe, PE.FLOW_REQ), 1);
    if (mark) markFlowRequest(sh.ctl, L, pe * DIR_COUNT);
  };
  ask(7, true, 0);
  ask(299, true, 0);
  // Published, not yet marked (its sender between the two stores); it starts after what the first pass makes final.
  ask(150, false, 5000);
  // No actor is active, so the bound is Infinity: a pass makes final the flows that end first.
  const first = arbiter.pass();
  t.same(first, [7 * DIR_COUNT, 299 * DIR_COUNT], 'the two marked requests, made final');
  t.equal(Atomics.load(sh.ctl, HEADER.FLOWS_PENDING), 1, 'the unmarked one is still pending');
  t.same(arbiter.pass(), [], 'a pass reads no FLOW_REQ word of an unmarked channel (a full scan would have added it)');
  markFlowRequest(sh.ctl, L, 150 * DIR_COUNT);
  t.same(arbiter.pass(), [150 * DIR_COUNT], 'its mark brings it into the next pass');
  t.equal(Atomics.load(sh.ctl, HEADER.FLOWS_PENDING), 0);
  t.same(arbiter.pass(), [], 'nothing left');
});

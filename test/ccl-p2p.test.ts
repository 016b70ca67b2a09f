// Host point-to-point (docs/algorithms/p2p.md): send, recv, isend, irecv and
// batchIsendIrecv as kernels over peer channels, and the all-to-all of tensor
// lists. Pipeline parallelism (rank r sends to r + 1) gives the right data for
// every dtype (its determinism: ccl-p2p-determinism.test.ts); messages match by (src, dst, order) on a subgroup, by global and
// group ranks; a receive nobody sends to is a deadlock report; a batch lets two
// ranks send to each other messages larger than a ring; misuse fails by code.
import t from 'tap';
import { DTYPES } from '../lib/public/index.js';
import { P2P_FIXTURES, listAllToAllWorker, listValue, matchWorker, p2pMisuseWorker, pipelineOutput, pipelineWorker, ringSwapWorker, unmatchedRecvWorker } from './fixtures/p2p.js';
import { TestRuntime } from './helpers/run.js';
import { PEERS, range } from './helpers/all-to-all.js';

const rt = new TestRuntime({ modules: [P2P_FIXTURES] });
t.teardown(() => rt.close());

t.test('a pipeline of 4 stages (send to r + 1, recv from r - 1) gives every microbatch the sum of the stages, for every dtype', async (t) => {
  const p = 4, n = 33, micro = 3;
  const seen: Record<string, boolean> = {};
  for (const dtype of DTYPES) {
    const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: PEERS(p) }, (torch) => torch.multiprocessing.spawn(pipelineWorker, { args: [n, dtype, micro, false], nprocs: p }));
    seen[dtype] = JSON.stringify(r.value[p - 1].out) === JSON.stringify(range(micro, (m) => pipelineOutput(p, m, n)));
  }
  t.same(seen, Object.fromEntries(DTYPES.map((d) => [d, true])));
});

t.test('messages match by (src, dst, order) on a subgroup, addressed by global or group rank', async (t) => {
  const members = [4, 1, 3];
  const r = await rt.session({ topology: 'ring_1d_6', threads: 2, sets: PEERS(6) }, (torch) => torch.multiprocessing.spawn(matchWorker, { args: [members], nprocs: 6 }));
  t.same(r.value, [null, [], null, [[30, 31, 32, 33], [10, 11, 12, 13], [20, 21, 22, 23]], [], null]);
});

t.test('a recv with no matching send ends the run with a deadlock report naming the receive', async (t) => {
  await rt.session({ topology: 'ring_1d_6', threads: 'rank', sets: PEERS(2) }, async (torch) => {
    const e = await torch.multiprocessing.spawn(unmatchedRecvWorker, { nprocs: 2 }).then(
      () => null,
      (err: unknown) => err,
    );
    t.equal((e as { code?: string } | null)?.code, 'ERR_DEADLOCK');
    const waiters = (e as { waiters?: string[] }).waiters ?? [];
    t.ok(waiters.some((w) => w.startsWith('PE (sip 0, cube 0, pe 0)') && w.includes('waits for IPCQ data from PE (sip 1, cube 0, pe 0)')), waiters.join('\n'));
  });
});

t.test('a ring swap of messages larger than a ring runs as one batchIsendIrecv; as isend then irecv it is a deadlock report', async (t) => {
  const p = 4, n = 4096; // 16 KiB a message; a ring holds n_slots x vc_chunk_size = 4 KiB (topologies/ccl.yaml)
  const ok = await rt.session({ topology: 'ring_1d_6', threads: 2, sets: PEERS(p) }, (torch) => torch.multiprocessing.spawn(ringSwapWorker, { args: [n, true], nprocs: p }));
  t.same(ok.value, range(p, (r) => range(n, (i) => 1000 * ((r - 1 + p) % p) + (i % 997))));
  await rt.session({ topology: 'ring_1d_6', threads: 2, sets: PEERS(p) }, async (torch) => {
    await t.rejects(torch.multiprocessing.spawn(ringSwapWorker, { args: [n, false], nprocs: p }), { code: 'ERR_DEADLOCK' });
  });
  const small = await rt.session({ topology: 'ring_1d_6', threads: 2, sets: PEERS(p) }, (torch) => torch.multiprocessing.spawn(ringSwapWorker, { args: [64, false], nprocs: p }));
  t.same(small.value, range(p, (r) => range(64, (i) => 1000 * ((r - 1 + p) % p) + i)), 'a message that fits the ring needs no batch');
});

t.test('misuse fails by code: itself as peer, a peer off the group, both rank forms, mixed groups in a batch, an op that is not isend/irecv, no peer channels', async (t) => {
  const codes: Record<string, string[]> = {};
  for (const kind of ['self', 'outside', 'both', 'mixed', 'op'] as const) {
    const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: PEERS(3) }, (torch) => torch.multiprocessing.spawn(p2pMisuseWorker, { args: [kind], nprocs: 3 }));
    codes[kind] = r.value;
  }
  const off = await rt.session({ topology: 'ring_1d_6', threads: 1 }, (torch) => torch.multiprocessing.spawn(p2pMisuseWorker, { args: ['plain'], nprocs: 2 }));
  codes.off = off.value;
  t.same(codes, {
    self: ['ERR_INVALID_PEER', 'ERR_INVALID_PEER', 'ERR_INVALID_PEER'],
    outside: ['ERR_INVALID_RANK', 'ERR_INVALID_RANK', 'ERR_NOT_GROUP_MEMBER'],
    both: ['ERR_INVALID_RANK', 'ERR_INVALID_RANK', 'ERR_INVALID_RANK'],
    mixed: ['ERR_P2P_MIXED_GROUPS', 'ERR_P2P_MIXED_GROUPS', 'ERR_INVALID_RANK'],
    op: ['ERR_INVALID_P2P_OP', 'ERR_INVALID_P2P_OP', 'ERR_INVALID_P2P_OP'],
    off: ['ERR_NO_PEER_CHANNELS', 'ERR_NO_PEER_CHANNELS'],
  });
});

/** sizes[i][j]: elements from group rank i to j, uneven. */
const SIZES = (p: number): number[][] => range(p, (i) => range(p, (j) => 1 + ((i * 5 + j * 3) % 7)));

t.test('allToAll of tensor lists moves uneven blocks, for every dtype, on the world and a subgroup, as allToAllSingle does', async (t) => {
  const p = 5;
  const sizes = SIZES(p);
  const want = (members: number[], me: number) => members.map((src, s) => range(sizes[s][me], (i) => listValue(src, members[me], i)));
  const seen: Record<string, boolean> = {};
  for (const dtype of DTYPES) {
    const r = await rt.session({ topology: 'ring_1d_6', threads: 1, sets: PEERS(p) }, (torch) => torch.multiprocessing.spawn(listAllToAllWorker, { args: [sizes, dtype, undefined, false], nprocs: p }));
    seen[dtype] = JSON.stringify(r.value) === JSON.stringify(range(p, (me) => want(range(p, (i) => i), me)));
  }
  t.same(seen, Object.fromEntries(DTYPES.map((d) => [d, true])));
  const members = [0, 2, 5];
  const sub = SIZES(3);
  const wantSub = (me: number) => members.map((src, s) => range(sub[s][me], (i) => listValue(src, members[me], i)));
  for (const single of [false, true]) {
    const r = await rt.session({ topology: 'single_switch_8', threads: 2, sets: PEERS(8) }, (torch) => torch.multiprocessing.spawn(listAllToAllWorker, { args: [sub, 'f32', members, single], nprocs: 8 }));
    t.same(r.value, [wantSub(0), null, wantSub(1), null, null, wantSub(2), null, null], single ? 'allToAllSingle' : 'allToAll');
  }
});

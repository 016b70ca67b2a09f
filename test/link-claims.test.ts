// Runs on: main thread (tap), sessions on real threads. Covers: shared links proved
// alone by claims and the launch horizon (lib/sync/link-claims.ts,
// docs/decisions/0100-claims-and-a-launch-horizon.md): with timing.link_sharing: max_min
// a piece alone on its links takes its channel's own fast path and any other goes
// through the link arbiter, in one run; the times and digests are the arbitrated
// run's, whether the flows never meet (the ring all-reduce) or meet (the tree), and
// the session callback runs once.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { withTorch, type Torch } from '../lib/public/index.js';
import { TestRuntime } from './helpers/run.js';
import { worker } from '../benches/link_sharing.js';
import { worker as lateWorker } from '../benches/late_meeting.js';

const rt = new TestRuntime({ modules: [new URL('../benches/link_sharing.js', import.meta.url).href] });
t.teardown(() => rt.close());
const late = new TestRuntime({ modules: [new URL('../benches/late_meeting.js', import.meta.url).href] });
t.teardown(() => late.close());

const CLAIMED = ['timing.link_sharing=max_min'];
const ARBITRATED = ['timing.link_sharing=max_min', 'timing.link_fast_path=false'];
const UNSHARED = ['timing.link_sharing=none'];

async function allReduce(algorithm: string, p: number, bytes: number, links: string[], over: { threads?: 1 | 2 | 'rank' | 'pe'; jitterSeed?: number } = {}) {
  const out = await rt.run('ccl_allreduce', { algorithm, topology: 'ideal', dtype: 'f32', threads: over.threads ?? 1, jitterSeed: over.jitterSeed ?? null, sets: [`system.sips.count=${p}`, `ccl.n_elem=${bytes / 4}`, 'ccl.n_slots=16', ...links] });
  const [r] = out.results;
  if (!r.ok) throw new Error(r.lines.join(' | '));
  return { critNs: r.critNs, digest: r.digest };
}

/** The same all-reduce with claims (the default), arbitrated from the start, and unshared. */
async function threeWays(algorithm: string, p: number, bytes: number) {
  return { fast: await allReduce(algorithm, p, bytes, CLAIMED), slow: await allReduce(algorithm, p, bytes, ARBITRATED), none: await allReduce(algorithm, p, bytes, UNSHARED) };
}

t.test('a ring all-reduce, whose flows never meet, gives the arbitrated times', async (t) => {
  for (const [p, bytes] of [
    [5, 81920],
    [8, 262144],
  ]) {
    const { fast, slow, none } = await threeWays('ring_allreduce', p, bytes);
    t.equal(fast.critNs, slow.critNs, `p = ${p}: crit as arbitrated (${slow.critNs} ns)`);
    t.equal(fast.digest, slow.digest, `p = ${p}: digest as arbitrated`);
    t.equal(fast.critNs, none.critNs, `p = ${p}: and as unshared (its flows never meet)`);
  }
});

t.test('a tree all-reduce, whose flows meet, gives the arbitrated times, not the unshared ones', async (t) => {
  for (const [p, bytes] of [
    [4, 65536],
    [8, 262144],
  ]) {
    const { fast, slow, none } = await threeWays('tree_allreduce', p, bytes);
    t.equal(fast.critNs, slow.critNs, `p = ${p}: crit as arbitrated (${slow.critNs} ns)`);
    t.equal(fast.digest, slow.digest, `p = ${p}: digest as arbitrated`);
    t.ok(fast.critNs > none.critNs, `p = ${p}: slower than unshared (${fast.critNs} > ${none.critNs} ns): the meeting flows shared their links`);
  }
});

t.test('the tree with claims gives the same digest and crit under every thread layout and under jitter', async (t) => {
  const ref = await allReduce('tree_allreduce', 8, 65536, CLAIMED);
  for (const over of [{ threads: 'rank' as const }, { threads: 2 as const }, { threads: 'pe' as const }, { threads: 2 as const, jitterSeed: 11 }]) {
    const r = await allReduce('tree_allreduce', 8, 65536, CLAIMED, over);
    t.equal(r.digest, ref.digest, `digest, ${JSON.stringify(over)}`);
    t.equal(r.critNs, ref.critNs, `crit, ${JSON.stringify(over)}`);
  }
});

t.test('a session callback whose tree all-reduce meets on shared links runs once, with the arbitrated run\'s value', async (t) => {
  let calls = 0;
  const run = await rt.session({ topology: 'ideal', algorithm: 'tree_allreduce', sets: ['system.sips.count=8', ...CLAIMED] }, async (torch) => {
    calls++;
    const rs = await torch.multiprocessing.spawn(worker, { args: [16384, 1], nprocs: 8 });
    return Math.max(...rs.map((r) => r.critNs));
  });
  t.equal(calls, 1, 'the callback ran once');
  const slow = await rt.session({ topology: 'ideal', algorithm: 'tree_allreduce', sets: ['system.sips.count=8', ...ARBITRATED] }, async (torch) => {
    const rs = await torch.multiprocessing.spawn(worker, { args: [16384, 1], nprocs: 8 });
    return Math.max(...rs.map((r) => r.critNs));
  });
  t.equal(run.value, slow.value, 'its value equal to the arbitrated run\'s');
});

t.test('a user\'s own module, outside the package, through withTorch: its tree all-reduce gets the arbitrated times and digest', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-links-user-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'workers.mjs');
  // What a user writes: spawn targets in their own module, the public torch API only.
  writeFileSync(
    file,
    `export async function sum(rank, n, torch) {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const x = torch.zeros([n], { dtype: 'f32' });
  await x.copy_(torch.fromArray(new Float32Array(n).fill(rank + 1)));
  const work = await torch.distributed.allReduce(x, { op: 'sum' });
  return { critNs: work.critNs, first: (await x.numpy()).data[0] };
}
`,
  );
  const url = pathToFileURL(file).href;
  type Sum = (rank: number, n: number, torch: Torch) => Promise<{ critNs: number; first: number }>;
  const { sum } = (await import(url)) as { sum: Sum };
  const go = (sets: string[]) =>
    withTorch({ topology: 'ideal', algorithm: 'tree_allreduce', threads: 2, sets: ['system.sips.count=8', 'ccl.n_slots=16', ...sets], modules: [url] }, (torch) =>
      torch.multiprocessing.spawn(sum, { args: [16384], nprocs: 8 }),
    );
  const fast = await go([]);
  const slow = await go(['timing.link_fast_path=false']);
  const none = await go(['timing.link_sharing=none']);
  t.same(fast.value, slow.value, 'every rank\'s value and crit as arbitrated');
  t.equal(fast.digest, slow.digest, 'digest as arbitrated');
  t.ok(fast.value.every((r) => r.first === 36), 'the sums are right (1 + ... + 8)');
  t.ok(Math.max(...fast.value.map((r) => r.critNs)) > Math.max(...none.value.map((r) => r.critNs)), 'slower than with links not shared');
});

t.test('a program whose 1-hop flow leaves a link before its 3-hop flow enters it runs once on one thread, with the arbitrated times', async (t) => {
  // benches/late_meeting.ts with small meeting broadcasts: SIP 1 -> 2 (one hop, 82 ns of bytes) is off the link
  // 1 -> 2 long before SIP 0 -> 3 (three hops of 1 us each) enters it.
  const go = async (sets: string[]) => {
    let calls = 0;
    const run = await late.session({ topology: 'ideal', algorithm: 'ring_allreduce', threads: 1, sets: ['system.sips.count=8', ...sets] }, (torch) => {
      calls++;
      return torch.multiprocessing.spawn(lateWorker, { args: [1024, 1, 2048], nprocs: 8 });
    });
    return { calls, critNs: Math.max(...run.value) };
  };
  const fast = await go([]);
  const slow = await go(['timing.link_fast_path=false']);
  t.equal(fast.calls, 1, 'the callback ran once');
  t.equal(fast.critNs, slow.critNs, `crit as arbitrated from the start (${slow.critNs} ns)`);
});

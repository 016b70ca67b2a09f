// Runs on: main thread (tap), sessions on real threads. Covers: the optimistic fast
// path of shared links (lib/ipcq/link-overlap.ts, docs/decisions/0030-optimistic-links.md):
// with timing.link_sharing: max_min every piece first takes its channel's own fast path;
// a run whose flows never meet (the ring all-reduce) keeps it to the end, a run whose
// flows meet (the tree all-reduce) is caught and run again with every piece through the
// link arbiter; either way the times and digests are the arbitrated run's.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { withTorch, type Torch } from '../lib/public/index.js';
import { TestRuntime } from './helpers/run.js';
import { worker } from '../benches/link_sharing.js';

const rt = new TestRuntime({ modules: [new URL('../benches/link_sharing.js', import.meta.url).href] });
t.teardown(() => rt.close());

const OPTIMISTIC = ['timing.link_sharing=max_min'];
const ARBITRATED = ['timing.link_sharing=max_min', 'timing.link_fast_path=false'];
const UNSHARED = ['timing.link_sharing=none'];

async function allReduce(algorithm: string, p: number, bytes: number, links: string[], over: { threads?: 1 | 2 | 'rank' | 'pe'; jitterSeed?: number } = {}) {
  const out = await rt.run('ccl_allreduce', { algorithm, topology: 'ideal', dtype: 'f32', threads: over.threads ?? 1, jitterSeed: over.jitterSeed ?? null, sets: [`system.sips.count=${p}`, `ccl.n_elem=${bytes / 4}`, 'ccl.n_slots=16', ...links] });
  const [r] = out.results;
  if (!r.ok) throw new Error(r.lines.join(' | '));
  return { critNs: r.critNs, digest: r.digest, replays: out.linkReplays };
}

/** The same all-reduce optimistic (the default), arbitrated from the start, and unshared. */
async function threeWays(algorithm: string, p: number, bytes: number) {
  return { fast: await allReduce(algorithm, p, bytes, OPTIMISTIC), slow: await allReduce(algorithm, p, bytes, ARBITRATED), none: await allReduce(algorithm, p, bytes, UNSHARED) };
}

t.test('a ring all-reduce, whose flows never meet, keeps the fast path to the end and gives the arbitrated times', async (t) => {
  for (const [p, bytes] of [
    [5, 81920],
    [8, 262144],
  ]) {
    const { fast, slow, none } = await threeWays('ring_allreduce', p, bytes);
    t.equal(fast.replays, 0, `p = ${p}: no session replayed`);
    t.equal(fast.critNs, slow.critNs, `p = ${p}: crit as arbitrated (${slow.critNs} ns)`);
    t.equal(fast.digest, slow.digest, `p = ${p}: digest as arbitrated`);
    t.equal(fast.critNs, none.critNs, `p = ${p}: and as unshared (its flows never meet)`);
  }
});

t.test('a tree all-reduce, whose flows meet, is caught and run again arbitrated: its times are the arbitrated ones, not the unshared ones', async (t) => {
  for (const [p, bytes] of [
    [4, 65536],
    [8, 262144],
  ]) {
    const { fast, slow, none } = await threeWays('tree_allreduce', p, bytes);
    t.equal(fast.replays, 1, `p = ${p}: the session ran again`);
    t.equal(slow.replays, 0, `p = ${p}: arbitrated from the start, nothing to replay`);
    t.equal(fast.critNs, slow.critNs, `p = ${p}: crit as arbitrated (${slow.critNs} ns)`);
    t.equal(fast.digest, slow.digest, `p = ${p}: digest as arbitrated`);
    t.ok(fast.critNs > none.critNs, `p = ${p}: slower than unshared (${fast.critNs} > ${none.critNs} ns): the meeting flows shared their links`);
  }
});

t.test('the optimistic tree gives the same digest and crit under every thread layout and under jitter', async (t) => {
  const ref = await allReduce('tree_allreduce', 8, 65536, OPTIMISTIC);
  for (const over of [{ threads: 'rank' as const }, { threads: 2 as const }, { threads: 'pe' as const }, { threads: 2 as const, jitterSeed: 11 }]) {
    const r = await allReduce('tree_allreduce', 8, 65536, OPTIMISTIC, over);
    t.equal(r.digest, ref.digest, `digest, ${JSON.stringify(over)}`);
    t.equal(r.critNs, ref.critNs, `crit, ${JSON.stringify(over)}`);
  }
});

t.test('a session callback that catches the abandoned spawn still gets the arbitrated run: the callback runs again', async (t) => {
  const caught: unknown[] = [];
  let calls = 0;
  const run = await rt.session({ topology: 'ideal', algorithm: 'tree_allreduce', sets: ['system.sips.count=8', ...OPTIMISTIC] }, async (torch) => {
    calls++;
    try {
      const rs = await torch.multiprocessing.spawn(worker, { args: [16384, 1], nprocs: 8 });
      return Math.max(...rs.map((r) => r.critNs));
    } catch (e) {
      caught.push((e as { code?: string }).code);
      return -1;
    }
  });
  t.same(caught, ['ERR_LINK_REPLAY'], 'the first run\'s spawn rejected with ERR_LINK_REPLAY');
  t.equal(calls, 2, 'the callback ran twice');
  t.equal(run.report.linkReplayed, true, 'the report says the session was replayed');
  t.ok(run.value > 0, `the value is the second run's (crit ${run.value} ns)`);
  const slow = await rt.session({ topology: 'ideal', algorithm: 'tree_allreduce', sets: ['system.sips.count=8', ...ARBITRATED] }, async (torch) => {
    const rs = await torch.multiprocessing.spawn(worker, { args: [16384, 1], nprocs: 8 });
    return Math.max(...rs.map((r) => r.critNs));
  });
  t.equal(run.value, slow.value, 'and equal to the arbitrated run\'s');
});

t.test('a user\'s own module, outside the package, through withTorch: its tree all-reduce replays once and gets the arbitrated times and digest', async (t) => {
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
  t.equal(fast.report.linkReplayed, true, 'the default run replayed: its flows met');
  t.equal(slow.report.linkReplayed, false, 'arbitrated from the start: no replay');
  t.same(fast.value, slow.value, 'every rank\'s value and crit as arbitrated');
  t.equal(fast.digest, slow.digest, 'digest as arbitrated');
  t.ok(fast.value.every((r) => r.first === 36), 'the sums are right (1 + ... + 8)');
  t.ok(Math.max(...fast.value.map((r) => r.critNs)) > Math.max(...none.value.map((r) => r.critNs)), 'slower than with links not shared');
});

// Runs on: main thread (tap), sessions on real threads. Covers: a piece whose links
// only its own kernel's channels claim (decision 0187). On a ring of two SIPs east and
// west are both the other SIP, over the one link between them, so a kernel's two
// channels claim that link together. A ring all-reduce sends east only: its pieces are
// held and released alone once its kernel cannot send again before their end, never
// handed to the link arbiter (all 512 were before); and since the ring declares it sends
// east only (decision 0188), most go alone at once. A kernel that sends east and west at
// once really shares the link: its pieces must still get the arbiter's times. A launch that
// declares east only and sends west is refused.
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { kernbench } from './helpers/cli.js';
import { TestRuntime } from './helpers/run.js';
import { worker } from '../benches/ccl_allreduce.js';
import { bothWaysRank } from './fixtures/both-ways.js';
import type { SpawnError } from '../lib/public/index.js';

const rt = new TestRuntime({ modules: [new URL('../benches/ccl_allreduce.js', import.meta.url).href] });
t.teardown(() => rt.close());

const CLAIMED = ['timing.link_sharing=max_min'];
const ARBITRATED = ['timing.link_sharing=max_min', 'timing.link_fast_path=false'];

t.test('a 2-rank ring all-reduce on a ring of two SIPs sends no piece to the link arbiter, with the arbitrated times, on one thread or several', async (t) => {
  const go = async (threads: 1 | 2 | 'rank', sets: string[], jitterSeed: number | null = null) => {
    const run = await rt.session({ topology: 'default', algorithm: 'ring_allreduce', threads, jitterSeed, sets: ['ccl.n_elem=16384', ...sets] }, (torch) =>
      torch.multiprocessing.spawn(worker, { args: [2, 16384, 'f32', false], nprocs: 2 }),
    );
    return { pieces: run.report.linkPieces, messages: run.report.messages, critNs: Math.max(...run.value.map((r) => r.critNs)), wrong: run.value.reduce((n, r) => n + r.wrong, 0) };
  };
  const ref = await go(1, ARBITRATED);
  t.equal(ref.wrong, 0, 'arbitrated from the start: every element right');
  // (--threads pe starts a thread for each of the 32 PEs: the next test runs that layout on a machine of two PEs.)
  for (const [threads, jitter] of [
    [1, null],
    ['rank', null],
    [1, 7],
    [2, 5],
  ] as const) {
    const what = `--threads ${threads}${jitter === null ? '' : `, jitter ${jitter}`}`;
    const r = await go(threads, CLAIMED, jitter);
    t.equal(r.wrong, 0, `${what}: every element right`);
    t.equal(r.critNs, ref.critNs, `${what}: the arbitrated crit_ns (${ref.critNs} ns)`);
    t.equal(r.pieces.arbitrated, 0, `${what}: none through the arbiter (${r.pieces.alone} alone at once, ${r.pieces.released} held then alone)`);
    t.equal(r.pieces.alone + r.pieces.released, r.messages, `${what}: every piece timed alone`);
    // Declared east only, the kernel's claim of the link is its east channel's alone: no wait for its next send.
    t.ok(r.pieces.alone * 2 > r.messages, `${what}: most alone at once, on the send (${r.pieces.alone} of ${r.messages})`);
  }
});

const user = new TestRuntime({ modules: [new URL('./fixtures/both-ways.js', import.meta.url).href] });
t.teardown(() => user.close());

t.test('a user launch that declares it sends east only: alone on the link at once; a send west is refused, naming the direction', async (t) => {
  const go = (both: boolean, sends: ('east' | 'west')[] | null, threads: 1 | 'rank' = 1) =>
    user.session({ topology: 'ideal', threads, sets: ['system.sips.count=2'] }, (torch) => torch.multiprocessing.spawn(bothWaysRank, { args: [8192, 3, both, sends], nprocs: 2 }));
  for (const threads of [1, 'rank'] as const) {
    const declared = await go(false, ['east'], threads);
    const any = await go(false, null, threads);
    const n = declared.report.linkPieces;
    t.equal(n.alone, declared.report.messages, `--threads ${threads}: every piece alone at once (${n.alone} of ${declared.report.messages}; undeclared: ${any.report.linkPieces.alone} at once, ${any.report.linkPieces.released} held)`);
    t.same(declared.value.map((r) => [r.wrong, r.critNs]), any.value.map((r) => [r.wrong, r.critNs]), `--threads ${threads}: the same values and crit_ns as undeclared`);
  }
  const refused = await go(true, ['east']).then(
    () => null,
    (e: unknown) => e as SpawnError,
  );
  t.ok(refused !== null, 'bothWays declared east only: the spawn fails');
  if (refused !== null) t.same([...refused.errors.values()].map((e) => [(e as { code?: string }).code, (e as { cause?: { code?: string } }).cause?.code]), [['ERR_KERNEL', 'ERR_SEND_UNDECLARED'], ['ERR_KERNEL', 'ERR_SEND_UNDECLARED']], 'each rank\'s kernel: ERR_SEND_UNDECLARED');
  for (const [sends, code] of [
    [[], 'ERR_INVALID_ARG_TYPE'],
    [['up'], 'ERR_UNKNOWN_DIRECTION'],
  ] as const) {
    const bad = await go(false, sends as unknown as ('east' | 'west')[]).then(
      () => null,
      (e: unknown) => e as SpawnError,
    );
    t.same(bad === null ? null : [...bad.errors.values()].map((e) => (e as { code?: string }).code), [code, code], `sends ${JSON.stringify(sends)}: ${code} on each rank`);
  }
});

const BENCH = fileURLToPath(new URL('./fixtures/both-ways.js', import.meta.url));

async function bothWays(t: Test, args: string[], env: Record<string, string> = {}): Promise<{ critNs: number; digest: string } | null> {
  // The ideal machine with two SIPs, one PE each: a ring of two, as on the default machine, where bandwidth decides.
  const r = await kernbench(['run', '--bench', BENCH, '--topology', 'ideal', '--set', 'system.sips.count=2', '--json', ...args], { env });
  const what = `${args.join(' ')}${env.KERNBENCH_JITTER ? ` jitter ${env.KERNBENCH_JITTER}` : ''}`;
  t.equal(r.exitCode, 0, `${what}: exit 0 (stderr: ${r.stderr.slice(0, 300)})`);
  if (r.exitCode !== 0) return null;
  const x = JSON.parse(r.stdout) as { ok: boolean; critNs: number; digest: string };
  t.ok(x.ok, `${what}: every element right`);
  return { critNs: x.critNs, digest: x.digest };
}

t.test('a user kernel sending east and west at once over the one link shares it: the arbitrated times in every layout, not the unshared ones', async (t) => {
  const ref = await bothWays(t, ['--threads', '1', '--set', ARBITRATED[1]]);
  if (ref === null) return;
  for (const [args, env] of [
    [['--threads', '1'], {}],
    [['--threads', 'rank'], {}],
    [['--threads', 'pe'], { KERNBENCH_JITTER: '3' }],
  ] as [string[], Record<string, string>][]) {
    const r = await bothWays(t, args, env);
    if (r !== null) t.same(r, ref, `${args.join(' ')}${env.KERNBENCH_JITTER ? ' with jitter' : ''}: the arbitrated crit_ns and digest (${ref.critNs} ns)`);
  }
  const none = await bothWays(t, ['--threads', '1', '--set', 'timing.link_sharing=none']);
  if (none !== null) t.ok(none.critNs < ref.critNs, `unshared is faster (${none.critNs} < ${ref.critNs} ns): the two flows do meet`);
  // East only: the same kernel shape whose flows never meet gets the unshared times too.
  const east = await bothWays(t, ['--threads', 'rank', '--pattern', 'east']);
  const eastNone = await bothWays(t, ['--threads', '1', '--pattern', 'east', '--set', 'timing.link_sharing=none']);
  if (east !== null && eastNone !== null) t.same(east, eastNone, `east only: the unshared crit_ns and digest (${eastNone.critNs} ns)`);
});

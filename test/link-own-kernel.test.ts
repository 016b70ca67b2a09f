// Runs on: main thread (tap), sessions on real threads. Covers: a piece whose links
// only its own kernel's channels claim (decision 0187). On a ring of two SIPs east and
// west are both the other SIP, over the one link between them, so a kernel's two
// channels claim that link together. A ring all-reduce sends east only: its pieces are
// held and released alone once its kernel cannot send again before their end, never
// handed to the link arbiter (all 512 were before). A kernel that sends east and west at
// once really shares the link: its pieces must still get the arbiter's times.
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { kernbench } from './helpers/cli.js';
import { TestRuntime } from './helpers/run.js';
import { worker } from '../benches/ccl_allreduce.js';

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

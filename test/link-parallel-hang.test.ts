// Runs on: main thread (tap), sessions on real threads. Covers issue 23 item 1: a user's
// recursive halving-doubling all-reduce (test/fixtures/halving-doubling.ts: one 2-rank
// group per partner, one collective per step, each reduce-scatter step as two tl.parallel
// branches) on the ideal topology with 8 ranks, whose flows meet on shared links. It used
// to stop now and then at 0 % CPU, with no deadlock reported (or to report a deadlock that
// was not there): tl.parallel left an instant in which none of its PE's actors was active,
// and a link arbiter pass or the deadlock detector that looked then saw a PE about to run
// as one that could not (decision 0047). Every run must end, with the same answer, under
// every layout, with jitter, and in every link mode. Each run is bounded by the CLI
// helper's guard, so a hang fails an assertion instead of holding up the suite.
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { kernbench } from './helpers/cli.js';

const BENCH = fileURLToPath(new URL('./fixtures/halving-doubling.js', import.meta.url));

/** Several all-reduces per session: each one crosses tl.parallel's hand-overs 8 ranks x 3 steps times. */
const BASE = ['run', '--bench', BENCH, '--topology', 'ideal', '--iterations', '3', '--json'];

interface Out {
  ok: boolean;
  critNs: number;
  digest: string;
}

async function run(t: Test, args: string[], env: Record<string, string> = {}): Promise<Out | null> {
  const r = await kernbench([...BASE, ...args], { env });
  const what = `${args.join(' ')}${env.KERNBENCH_JITTER ? ` jitter ${env.KERNBENCH_JITTER}` : ''}`;
  t.equal(r.timedOut, false, `${what}: ends`);
  t.equal(r.exitCode, 0, `${what}: exit 0 (stderr: ${r.stderr.slice(0, 400)})`);
  if (r.exitCode !== 0) return null;
  const x = JSON.parse(r.stdout) as Out;
  t.ok(x.ok, `${what}: every element right`);
  return { ok: x.ok, critNs: x.critNs, digest: x.digest };
}

const ARBITRATED = ['--set', 'timing.link_fast_path=false'];

t.test('a halving-doubling all-reduce with tl.parallel steps ends with one answer under every layout, jitter seed and link mode', async (t) => {
  // The reference: one executor, links shared and arbitrated from the start (the mode the hang was seen in).
  const ref = await run(t, ['--threads', '1', ...ARBITRATED]);
  if (ref === null) return;
  const runs: [string[], Record<string, string>][] = [
    [['--threads', '1', ...ARBITRATED], { KERNBENCH_JITTER: '3' }],
    [['--threads', '1'], {}],
    [['--threads', '1'], { KERNBENCH_JITTER: '1' }],
    [['--threads', 'rank', ...ARBITRATED], {}],
    [['--threads', 'pe'], { KERNBENCH_JITTER: '5' }],
  ];
  for (const [args, env] of runs) {
    const x = await run(t, args, env);
    if (x === null) continue;
    t.same([x.digest, x.critNs], [ref.digest, ref.critNs], `${args.join(' ')} ${JSON.stringify(env)}: the reference's digest and crit_ns`);
  }
  // Unshared links: its own times (nothing shares a link), the same data, and it ends.
  const none = await run(t, ['--threads', '1', '--set', 'timing.link_sharing=none']);
  if (none !== null) t.ok(none.critNs < ref.critNs, `unshared links are faster (${none.critNs} < ${ref.critNs} ns): the flows do meet`);
});

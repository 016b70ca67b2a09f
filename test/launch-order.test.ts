// Launches from several hosts onto one PE (docs/decisions/0090-launch-order-by-sharing-at-spawn.md):
// on a PE shared at spawn they run in (virtual time, host rank) order, never in the
// order their commands arrive, so the answer is the same in every layout and under
// jitter; a launch onto another host's PE that is not shared is refused with
// ERR_LAUNCH_FOREIGN_PE. The program is a user bench (test/fixtures/two-hosts-one-pe.ts,
// public API only), run from the command line as a user would.
import t from 'tap';
import { SpawnError } from '../lib/public/index.js';
import type { ThreadLayout } from '../lib/config/plan.js';
import { foreignPeRank, idleRank, loadAll } from './fixtures/two-hosts-one-pe.js';
import { kernbench } from './helpers/cli.js';
import { TestRuntime } from './helpers/run.js';

const FIXTURE = 'dist/test/fixtures/two-hosts-one-pe.js';
// One cube per SIP (4 PEs each): --threads pe still differs from rank and from 1, with few threads.
const SMALL = ['--set', 'sip.cube_mesh.w=1', '--set', 'sip.cube_mesh.h=1'];

interface Answer {
  critNs: number;
  digest: string;
  lines: string[];
}

async function answer(threads: string, jitter?: string): Promise<Answer> {
  const r = await kernbench(['run', '--bench', FIXTURE, '--threads', threads, '--json', ...SMALL], jitter === undefined ? {} : { env: { KERNBENCH_JITTER: jitter } });
  if (r.exitCode !== 0) throw new Error(`--threads ${threads} exited ${String(r.exitCode)}: ${r.stderr}`);
  const j = JSON.parse(r.stdout) as Answer;
  return { critNs: j.critNs, digest: j.digest, lines: j.lines };
}

t.test('two hosts launching onto one PE at one virtual time: one digest and crit_ns under --threads 1, 2, rank and pe, with and without jitter', async (t) => {
  const reference = await answer('1');
  // Rank 0's load runs first (same time, lower rank): rank 1 waits behind it, then loads its own tensor.
  const ends = reference.lines.map((l) => Number(/ends at ([\d.]+) ns/.exec(l)?.[1]));
  t.ok(ends[0] < ends[1], `rank 0's launch ran first (ends ${ends.join(', ')})`);
  t.equal(reference.critNs, ends[1], 'crit_ns is rank 1\'s end');
  const runs: [string, string | undefined][] = [
    ['rank', undefined],
    ['pe', undefined],
    ['2', undefined],
    ['rank', '1'],
    ['rank', '2'],
    ['pe', '3'],
    ['pe', '4'],
    ['1', '5'],
  ];
  for (const [threads, jitter] of runs) {
    t.same(await answer(threads, jitter), reference, `--threads ${threads}${jitter === undefined ? '' : `, KERNBENCH_JITTER=${jitter}`}`);
  }
});

const rt = new TestRuntime({ modules: [new URL('./fixtures/two-hosts-one-pe.js', import.meta.url).href] });
t.teardown(() => rt.close());

t.test("a rank launching onto another rank's SIP, not shared at spawn, is refused with ERR_LAUNCH_FOREIGN_PE in every layout", async (t) => {
  for (const threads of [1, 'rank', 'pe'] as ThreadLayout[]) {
    const e = await rt
      .session({ threads, sets: ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1'] }, async (torch) => torch.multiprocessing.spawn(foreignPeRank, { args: [16], nprocs: 2 }))
      .then(() => undefined, (x: unknown) => x);
    t.ok(e instanceof SpawnError, `--threads ${threads}: the spawn fails`);
    if (!(e instanceof SpawnError)) continue;
    t.same([...e.errors.keys()], [1], 'rank 1 alone is the root cause');
    t.equal((e.errors.get(1) as { code?: string }).code, 'ERR_LAUNCH_FOREIGN_PE', 'with its own code');
  }
});

t.test("main launching onto a live spawn's SIP is refused, and allowed again once the ranks are joined", async (t) => {
  const r = await rt.session({ threads: 'rank', sets: ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1'] }, async (torch) => {
    const x = torch.zeros([16], { name: 'x' });
    const ctx = await torch.multiprocessing.spawn(idleRank, { args: [], nprocs: 2, join: false });
    let during: unknown;
    try {
      torch.launch('loadDuring', loadAll, x);
    } catch (e) {
      during = e;
    }
    await ctx.join();
    await torch.launch('loadAfter', loadAll, x).wait();
    return (during as { code?: string } | undefined)?.code;
  });
  t.equal(r.value, 'ERR_LAUNCH_FOREIGN_PE');
});

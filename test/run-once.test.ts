// Runs on: main thread (tap). Covers: user code runs once (issue 23 item 5, decision
// 0100). A user's bench (test/fixtures/late-meeting-once-bench.ts, public API) runs
// ring all-reduces, then two broadcasts that meet on a shared link; its session
// callback appends a line to a file on every run. With links shared (the default)
// it runs exactly once, under --threads 1, rank and pe and with jitter, and its
// crit_ns and digest equal the run arbitrated from the start
// (timing.link_fast_path: false). Before decision 0100 the meeting voided the
// session and the callback ran twice.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { kernbench } from './helpers/cli.js';

const BENCH = 'dist/test/fixtures/late-meeting-once-bench.js';
const SMALL = ['--topology', 'ideal', '--set', 'system.sips.count=8', '--json'];

const dir = mkdtempSync(join(tmpdir(), 'kb-run-once-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** One run of the bench: its callback runs (lines in a fresh file), crit_ns and digest. */
async function once(args: string[], env: Record<string, string> = {}): Promise<{ calls: number; critNs: number; digest: string }> {
  const file = join(dir, `calls-${n++}`);
  const r = await kernbench(['run', '--bench', BENCH, ...SMALL, ...args], { env: { ...env, KB_CALLBACK_FILE: file } });
  if (r.exitCode !== 0) throw new Error(`exit ${String(r.exitCode)}: ${r.stderr}`);
  const line = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { critNs: number; digest: string };
  return { calls: readFileSync(file, 'utf8').split('\n').filter((l) => l === 'ran').length, critNs: line.critNs, digest: line.digest };
}

const ARBITRATED = ['--set', 'timing.link_fast_path=false'];

for (const [label, args, env] of [
  ['--threads 1', ['--threads', '1'], {}],
  ['--threads rank', ['--threads', 'rank'], {}],
  ['--threads pe', ['--threads', 'pe'], {}],
  ['--threads 2, KERNBENCH_JITTER=1', ['--threads', '2'], { KERNBENCH_JITTER: '1' }],
] as const) {
  t.test(`a late meeting on a shared link runs the session callback once (${label}), with the arbitrated times`, async (t) => {
    const shared = await once([...args], env);
    const slow = await once([...args, ...ARBITRATED], env);
    t.equal(shared.calls, 1, 'the callback ran once with links shared');
    t.equal(slow.calls, 1, 'and once arbitrated from the start');
    t.equal(shared.critNs, slow.critNs, `crit_ns as arbitrated from the start (${slow.critNs})`);
    t.equal(shared.digest, slow.digest, 'digest as arbitrated from the start');
  });
}

t.test('the meeting is real: with links not shared the run is faster', async (t) => {
  const shared = await once(['--threads', '1']);
  const none = await once(['--threads', '1', '--set', 'timing.link_sharing=none']);
  t.ok(shared.critNs > none.critNs, `shared ${shared.critNs} > unshared ${none.critNs}: the two broadcasts shared the link`);
});

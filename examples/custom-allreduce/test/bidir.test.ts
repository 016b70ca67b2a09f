// The example's own tests: run the bench through the kernbench CLI, as a user
// would, and check the two promises of bidir_ring.ts — the same result under
// every thread layout, and the alpha-beta law on the ideal topology.
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

const PROJECT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The installed CLI, run with this test's node (`npx kernbench` does the same, a little slower). */
const CLI = join(dirname(fileURLToPath(import.meta.resolve('kernbench/package.json'))), 'bin', 'kernbench.js');

interface Result {
  ok: boolean;
  algorithm: string;
  worldSize: number;
  critNs: number;
  digest: string;
  /** The bench's extra figures (--json keeps them under `extra`). */
  extra: { bytesPerRank: number; alphaNs: number; betaBytesPerNs: number };
}

/** `kernbench run --bench ./bench.ts --ccl ./ccl.yaml --topology ideal --json ...flags`: the one result it prints. */
async function run(...flags: string[]): Promise<Result> {
  const args = [CLI, 'run', '--bench', './bench.ts', '--ccl', './ccl.yaml', '--topology', 'ideal', '--json', ...flags];
  const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: PROJECT });
  const lines = stdout.trim().split('\n');
  if (lines.length !== 1) throw new Error(`expected one JSON result line, got ${lines.length}: ${stdout}`);
  return JSON.parse(lines[0]) as Result;
}

// The layouts run on three ranks of 1536 f32 (N = 6 KiB; fewer threads, a quicker
// test): each ring step's chunk is N/(2p) = 1 KiB, one IPCQ message, as with
// ccl.yaml's 4096 elements on the ideal topology's 8 ranks. All runs start at once.
const THREE_RANKS = ['--set', 'system.sips.count=3', '--set', 'ccl.n_elem=1536'];
const layouts = ['1', 'rank', 'pe'];
const onThree = Promise.all(layouts.map((threads) => run(...THREE_RANKS, '--threads', threads)));
const onEight = run('--threads', '1');

t.test('bidir_ring gives the right data and the same digest and crit_ns under --threads 1, rank and pe', async (t) => {
  const [reference, ...others] = await onThree;
  t.equal(reference.algorithm, 'bidir_ring', 'ccl.yaml runs our module by default');
  t.ok(reference.ok, 'every element of every rank is the sum');
  t.same(
    others.map((r) => ({ ok: r.ok, digest: r.digest, critNs: r.critNs })),
    others.map(() => ({ ok: true, digest: reference.digest, critNs: reference.critNs })),
    `as under --threads 1: digest ${reference.digest}, crit_ns ${reference.critNs}`,
  );
});

t.test('on the ideal topology bidir_ring takes 2(p - 1)(alpha + N/(2 p beta)), on 3 and on 8 ranks', async (t) => {
  for (const r of [(await onThree)[0], await onEight]) {
    const p = r.worldSize;
    const { bytesPerRank: n, alphaNs: alpha, betaBytesPerNs: beta } = r.extra;
    const law = 2 * (p - 1) * (alpha + n / (2 * p * beta));
    t.ok(r.ok, `p = ${p}: the sums are right`);
    t.ok(Math.abs(r.critNs - law) <= 1e-6 * law, `p = ${p}, N = ${n} B, alpha = ${alpha} ns, beta = ${beta} B/ns: crit_ns ${r.critNs}, law ${law}`);
  }
});

// Runs on: main thread (tap). Covers: a run that never ends by itself is stopped
// with a report (issue 23 item 3; decision 0095) — an endless loop at import, a
// kernel looping synchronously, a kernel whose virtual time grows without bound,
// a top-level await on a live timer — by --timeout (withTorch's timeout), by
// SIGINT, and by the virtual-time limit, under --threads 1, rank and pe. The
// benches are user benches on the public API (test/fixtures/stuck-*.ts). Asserts
// codes and the report's structured fields (--json, RunStoppedError.actors);
// no assertion is on wall time (the timeout itself is an input).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import t, { type Test } from 'tap';
import { BIN, ROOT, kernbench, kernbenchProcess } from './helpers/cli.js';
import { withTorch } from '../lib/bench/with-torch.js';
import { RunStoppedError, type ActorStateReport } from '../lib/errors.js';
import { stuckRank } from './fixtures/stuck-kernels.js';
import type { ThreadLayout } from '../lib/config/plan.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}.js`, import.meta.url));
const KERNELS = fixture('stuck-kernels');
const KERNELS_URL = new URL('./fixtures/stuck-kernels.js', import.meta.url).href;
const PE0 = { sip: 0, cube: 0, pe: 0 };

interface StoppedJson {
  error: { name: string; code: string; summary: string[]; actors: ActorStateReport[] };
}

/** The JSON line a stopped `run --json` prints last on stdout. */
function stoppedJson(stdout: string): StoppedJson['error'] {
  const last = stdout.trim().split('\n').at(-1) ?? '';
  return (JSON.parse(last) as StoppedJson).error;
}

function assertKernelRunning(t: Test, actors: ActorStateReport[], kernel: string): ActorStateReport | undefined {
  const k = actors.find((a) => a.kernel === kernel && a.who.endsWith('kernel'));
  t.ok(k, `an actor runs kernel '${kernel}': ${JSON.stringify(actors)}`);
  t.equal(k?.state, 'running');
  t.same(k?.pe, PE0, 'on the PE rank 0 launched it on');
  return k;
}

for (const [name, what] of [
  ['stuck-import-loop', 'an endless loop at import'],
  ['stuck-await-timer', 'a top-level await on a live timer'],
] as const) {
  t.test(`${what} ends at --timeout with exit 1 and names the main host as importing the bench`, async (t) => {
    const r = await kernbenchProcess(['run', '--bench', fixture(name), '--timeout', '2', '--json']);
    t.equal(r.timedOut, false, 'answers instead of hanging');
    t.equal(r.exitCode, 1);
    t.match(r.stderr, '[ERR_TIMEOUT]');
    const e = stoppedJson(r.stdout);
    t.equal(e.code, 'ERR_TIMEOUT');
    t.same(e.actors.map((a) => [a.who, a.state]), [['main host', 'running']]);
    t.ok(e.actors[0].line.includes(fixture(name)), e.actors[0].line);
  });
}

t.test('a kernel whose virtual time grows without bound ends at --timeout, named as running', async (t) => {
  const r = await kernbenchProcess(['run', '--bench', KERNELS, '--mode', 'runaway', '--threads', '1', '--timeout', '5', '--json']);
  t.equal(r.exitCode, 1);
  const e = stoppedJson(r.stdout);
  t.equal(e.code, 'ERR_TIMEOUT');
  assertKernelRunning(t, e.actors, 'runaway');
});

t.test('Ctrl-C (SIGINT) stops a kernel that keeps its thread busy: exit 1 and the report', async (t) => {
  const child = execa('node', [BIN, 'run', '--bench', KERNELS, '--mode', 'spin', '--topology', 'ideal', '--json'], { reject: false, cwd: ROOT, timeout: 60_000 });
  // The kernel says it started (its thread is then busy for good): interrupt then.
  await new Promise<void>((resolve) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('spin: started')) resolve();
    });
    void child.then(() => resolve());
  });
  child.kill('SIGINT');
  const r = await child;
  t.equal(r.timedOut, false, 'answers instead of hanging');
  t.equal(r.exitCode, 1);
  const e = stoppedJson(String(r.stdout));
  t.equal(e.code, 'ERR_INTERRUPTED');
  assertKernelRunning(t, e.actors, 'spin');
  t.ok(e.actors.some((a) => a.rank === 1 && a.state === 'waiting'), 'rank 1 is named, waiting');
});

const LAYOUTS: ThreadLayout[] = [1, 'rank', 'pe'];

t.test('under --threads 1, rank and pe, an interrupted run names the busy kernel with its rank\'s PE, and the other rank', async (t) => {
  const dir = t.testdir({});
  for (const threads of LAYOUTS) {
    const marker = join(dir, `started-${threads}`);
    const stop = new AbortController();
    const run = withTorch({ topology: 'ideal', threads, signal: stop.signal, modules: [KERNELS_URL] }, (torch) => torch.multiprocessing.spawn(stuckRank, { args: ['spin', marker], nprocs: 2 })).then(
      () => undefined,
      (e: unknown) => e,
    );
    // Interrupt once the kernel has started (its thread is then busy for good).
    let settled = false;
    void run.then(() => (settled = true));
    while (!settled && !existsSync(marker)) await new Promise((r) => setTimeout(r, 50));
    stop.abort();
    const e = await run;
    t.ok(e instanceof RunStoppedError, `--threads ${threads}: ${String(e)}`);
    if (!(e instanceof RunStoppedError)) continue;
    t.equal(e.code, 'ERR_INTERRUPTED');
    assertKernelRunning(t, e.actors, 'spin');
    t.ok(e.actors.some((a) => a.rank === 0), 'rank 0 host is named');
    t.ok(e.actors.some((a) => a.who === 'main host' && a.state === 'waiting'), 'main waits for the ranks');
  }
});

t.test('under --threads 1, rank and pe, the virtual-time limit stops a runaway kernel with the same report', async (t) => {
  const limitNs = 5000;
  for (const threads of LAYOUTS) {
    const e = await withTorch({ threads, maxVirtualTimeNs: limitNs, modules: [KERNELS_URL] }, (torch) => torch.multiprocessing.spawn(stuckRank, { args: ['runaway', ''], nprocs: 2 })).then(
      () => undefined,
      (x: unknown) => x,
    );
    t.ok(e instanceof RunStoppedError, `--threads ${threads}: ${String(e)}`);
    if (!(e instanceof RunStoppedError)) continue;
    t.equal(e.code, 'ERR_VIRTUAL_TIME_LIMIT');
    const k = assertKernelRunning(t, e.actors, 'runaway');
    t.ok((k?.atPs ?? 0) > limitNs * 1000, 'at its clock past the limit');
  }
});

t.test('run --max-virtual-time stops the runaway kernel (exit 1, ERR_VIRTUAL_TIME_LIMIT); a bad value is a usage error', async (t) => {
  const r = await kernbench(['run', '--bench', KERNELS, '--mode', 'runaway', '--threads', '1', '--max-virtual-time', '5000', '--json']);
  t.equal(r.exitCode, 1);
  t.equal(stoppedJson(r.stdout).code, 'ERR_VIRTUAL_TIME_LIMIT');
  const bad = await kernbench(['run', '--bench', KERNELS, '--max-virtual-time', 'soon']);
  t.equal(bad.exitCode, 2);
  const badTimeout = await kernbench(['run', '--bench', KERNELS, '--timeout', '-1']);
  t.equal(badTimeout.exitCode, 2);
});

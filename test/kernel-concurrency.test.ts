// Runs on: main thread (tap). Covers: concurrency inside one kernel
// (lib/kernel/flow.ts, tl.parallel; docs/determinism.md "Concurrency inside a
// kernel"): concurrent flows written with tl.parallel give the same data and
// virtual times under every thread layout and under jitter; the same flows
// sharing one tl (Promise.all), two branches on one direction, and an
// operation started while a receive is still in flight are refused with
// ERR_KERNEL_CONCURRENCY, whatever the layout.
import t from 'tap';
import { SpawnError } from '../lib/public/index.js';
import type { RankOut } from './fixtures/concurrency.js';
import { TestRuntime } from './helpers/run.js';

const FIXTURE = new URL('./fixtures/concurrency.js', import.meta.url).href;
const rt = new TestRuntime({ modules: [FIXTURE] });
t.teardown(() => rt.close());

const WS = 4;
const N = 1000;

async function run(kernel: string, over: { threads?: 'rank' | 'pe' | number; jitterSeed?: number | null; topology?: string; sets?: string[] } = {}, extra: unknown[] = [], n = N): Promise<RankOut[]> {
  const { collectiveWorker } = await import('./fixtures/concurrency.js');
  const s = await rt.session({ topology: over.topology ?? 'ideal', threads: over.threads ?? 'rank', jitterSeed: over.jitterSeed ?? null, sets: [`system.sips.count=${WS}`, ...(over.sets ?? [])] }, (torch) =>
    torch.multiprocessing.spawn(collectiveWorker, { args: [kernel, n, extra], nprocs: WS }),
  );
  return s.value as RankOut[];
}

/** The root cause of rank `r` in a SpawnError: the kernel's own error code. */
function causeCodes(e: unknown): string[] {
  if (!(e instanceof SpawnError)) return [`not a SpawnError: ${String(e)}`];
  return [...e.errors.values()].map((err) => String(((err as { cause?: { code?: string } }).cause ?? err as { code?: string }).code));
}

t.test('a bidirectional ring written with tl.parallel all-reduces correctly, with the same times in every layout and under jitter', async (t) => {
  const runs: [string, RankOut[]][] = [];
  for (const threads of [1, 'rank', 'pe', 2] as const) runs.push([`--threads ${threads}`, await run('bidirParallel', { threads })]);
  for (const seed of [1, 2]) runs.push([`jitter ${seed}`, await run('bidirParallel', { threads: 'rank', jitterSeed: seed })]);
  const want = Array.from({ length: N }, (_, i) => Array.from({ length: WS }, (_, r) => r + 1 + (i % 7)).reduce((a, b) => a + b, 0));
  const [, ref] = runs[0];
  for (const r of ref) t.same(r.values, want, 'every element of every rank is the sum');
  for (const [name, got] of runs.slice(1)) t.same(got, ref, `${name}: data and crit_ns equal --threads 1's`);
});

t.test('on the ideal topology the two directions overlap: the bidirectional ring takes what one direction takes with half the data', async (t) => {
  const both = await run('bidirParallel', { threads: 1 });
  const half = await run('eastOnly', { threads: 1 }, [N / 2]);
  t.equal(Math.max(...both.map((r) => r.critNs)), Math.max(...half.map((r) => r.critNs)));
});

t.test('the same two flows sharing one tl through Promise.all are refused with ERR_KERNEL_CONCURRENCY in every layout', async (t) => {
  for (const threads of [1, 'rank', 'pe'] as const) {
    const e = await run('bidirPromiseAll', { threads }).catch((x: unknown) => x);
    const codes = causeCodes(e);
    t.ok(codes.length > 0 && codes.every((c) => c === 'ERR_KERNEL_CONCURRENCY'), `--threads ${threads}: ${codes.join(', ')}`);
  }
});

t.test('two tl.parallel branches on one direction are refused with ERR_KERNEL_CONCURRENCY', async (t) => {
  const e = await run('sharedDirection', { threads: 'rank' }).catch((x: unknown) => x);
  const codes = causeCodes(e);
  t.ok(codes.length > 0 && codes.every((c) => c === 'ERR_KERNEL_CONCURRENCY'), codes.join(', '));
});

t.test('an operation while a receive is in flight in the same flow is refused with ERR_KERNEL_CONCURRENCY', async (t) => {
  const e = await run('unawaitedRecv', { threads: 1 }).catch((x: unknown) => x);
  const codes = causeCodes(e);
  t.ok(codes.length > 0 && codes.every((c) => c === 'ERR_KERNEL_CONCURRENCY'), codes.join(', '));
});

t.test('two tl.parallel branches that both store to HBM: the refusal reads the same in every run under --threads pe (issue 23 item 6), and under --threads 1', async (t) => {
  // One cube per SIP: the race is between the ranks' own threads (one each under --threads pe), which
  // 4 PEs a SIP keep; the idle PEs of the other 3 cubes a SIP only made --threads pe start 64 threads, not 16.
  const sets = ['sip.cube_mesh.w=1', 'sip.cube_mesh.h=1'];
  const messages: string[] = [];
  for (const threads of ['pe', 'pe', 'pe', 'pe', 'pe', 1] as const) {
    const e = await run('storeInBranches', { threads, topology: 'default', sets }, [], 64).catch((x: unknown) => x);
    t.same(causeCodes(e), ['ERR_KERNEL_CONCURRENCY', 'ERR_KERNEL_CONCURRENCY', 'ERR_KERNEL_CONCURRENCY', 'ERR_KERNEL_CONCURRENCY'], `--threads ${threads}: every rank refused`);
    messages.push(e instanceof Error ? e.message : String(e));
  }
  for (let i = 1; i < messages.length; i++) t.equal(messages[i], messages[0], `run ${i + 1}: the same message as run 1`);
});

/** Every error code on `e`'s cause chain, and its ranks' (a SpawnError's). */
function codesIn(e: unknown, seen = new Set<unknown>()): string[] {
  if (typeof e !== 'object' || e === null || seen.has(e)) return [];
  seen.add(e);
  const x = e as { code?: unknown; cause?: unknown };
  const own = typeof x.code === 'string' ? [x.code] : [];
  const ranks = e instanceof SpawnError ? [...e.errors.values()].flatMap((r) => codesIn(r, seen)) : [];
  return [...own, ...codesIn(x.cause, seen), ...ranks];
}

t.test('a flow the kernel, or a tl.parallel branch, left running after it returned is refused with ERR_KERNEL_ENDED in every layout, not run with no actor to account for it', async (t) => {
  for (const [kernel, threads] of [['orphanFlow', 1], ['orphanFlow', 'rank'], ['orphanFlow', 2], ['branchOrphan', 1], ['branchOrphan', 'rank'], ['branchOrphan', 2]] as const) {
    const e = await run(kernel, { threads }, [], 64).then(
      (v) => new Error(`the run ended with crit_ns ${v.map((r) => r.critNs).join(', ')}`),
      (x: unknown) => x,
    );
    t.ok(codesIn(e).includes('ERR_KERNEL_ENDED'), `${kernel}, --threads ${threads}: ${codesIn(e).join(', ') || String(e)}`);
  }
});


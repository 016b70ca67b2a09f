// Runs on: main thread (tap). Covers: --bench PATH — a user's bench written in
// TypeScript in a folder outside the package, importing kernbench by its package
// name, with no build step: its own option, --help from its schema, workers
// spawned on executor threads under every --threads layout; and a module that
// breaks the bench contract refused up front (exit 2, its path, no stack).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { assertUsageError, kernbench, userProject } from './helpers/cli.js';

const DIR = userProject(t, 'user-benches');

// Each rank all-reduces (rank + 1) * scale; rank r reports the sum it got, and on which thread it ran.
writeFileSync(
  join(DIR, 'scaled.ts'),
  `import { threadId } from 'node:worker_threads';
import { defineBench, z, type BenchContext, type BenchResult } from 'kernbench/bench';
import type { Torch } from 'kernbench';

export async function worker(rank: number, scale: number, torch: Torch): Promise<{ sum: number; thread: number }> {
  torch.ahbm.setDevice(rank);
  await torch.distributed.initProcessGroup({ backend: 'ahbm' });
  const t = torch.zeros([8], { dtype: 'f32' });
  await t.copy_(torch.fromArray(new Float32Array(8).fill((rank + 1) * scale)));
  await torch.distributed.allReduce(t, { op: 'sum' });
  const out = await t.numpy();
  return { sum: out.data[0], thread: threadId };
}

const options = z.object({
  scale: z.number().int().positive().default(1).describe('multiplies every rank input'),
});

async function run(torch: Torch, ctx: BenchContext<z.output<typeof options>>): Promise<BenchResult[]> {
  const ws = torch.spec.system.sips.count;
  const ranks = (await torch.multiprocessing.spawn(worker, { args: [ctx.options.scale], nprocs: ws })) as { sum: number; thread: number }[];
  return [{
    bench: ctx.bench, algorithm: ctx.ccl.algorithm, topology: torch.topologyName, worldSize: ws, nElem: 8, dtype: 'f32', ok: true, critNs: 0,
    lines: [], extra: { sums: ranks.map((r) => r.sum).join(','), mainThread: threadId, threads: ranks.map((r) => r.thread).join(',') },
  }];
}

export default defineBench({ description: 'a user bench: scaled all-reduce', options, run });
`,
);

// The old contract (named description and run, no default export): refused.
writeFileSync(join(DIR, 'old-style.ts'), `export const description = 'not a defineBench bench';\nexport async function run() { return []; }\n`);

/** The --json line's fields this test reads: the bench's own figures are under `extra`. */
interface Line {
  worldSize: number;
  extra: Extra;
}

interface Extra {
  sums: string;
  mainThread: number;
  threads: string;
}

for (const threads of ['1', 'rank', 'pe']) {
  t.test(`a user TypeScript bench outside the package runs with its own option under --threads ${threads}, its workers on executor threads`, async (t) => {
    // One cube per SIP (4 PEs each): --threads pe still differs from rank, with 8 threads instead of 32.
    const small = ['--set', 'sip.cube_mesh.w=1', '--set', 'sip.cube_mesh.h=1'];
    const r = await kernbench(['run', '--bench', './scaled.ts', '--scale', '5', '--threads', threads, ...small, '--json'], { cwd: DIR });
    t.equal(r.exitCode, 0, `exit 0 (stderr: ${r.stderr})`);
    const line = JSON.parse(r.stdout) as Line;
    const ws = line.worldSize;
    const x = line.extra;
    const want = (5 * ws * (ws + 1)) / 2; // sum over ranks of (rank + 1) * scale
    t.same(x.sums.split(',').map(Number), Array.from({ length: ws }, () => want), 'every rank holds the scaled sum');
    t.ok(x.threads.split(',').every((id) => Number(id) !== x.mainThread), 'every rank ran on an executor thread, not the main thread');
  });
}

t.test("run --bench PATH --help lists the user bench's option with its description and default", async (t) => {
  const r = await kernbench(['run', '--bench', join(DIR, 'scaled.ts'), '--help']);
  t.equal(r.exitCode, 0);
  t.match(r.stdout, /^ {2}--scale N +multiplies every rank input \(default: 1\)$/m);
});

t.test("a user bench's option is validated by its schema: a bad value exits 2 naming the flag and the value", async (t) => {
  const r = await kernbench(['run', '--bench', './scaled.ts', '--scale', '-3'], { cwd: DIR });
  assertUsageError(t, r, 'ERR_INVALID_BENCH_OPTION');
  t.match(r.stderr, '--scale');
  t.match(r.stderr, "'-3'");
});

t.test('a module whose default export is not a defineBench bench exits 2 with its path and the exports expected and found', async (t) => {
  const file = join(DIR, 'old-style.ts');
  const r = await kernbench(['run', '--bench', file]);
  assertUsageError(t, r, 'ERR_MODULE_EXPORT');
  t.match(r.stderr, file, 'names the file');
  t.match(r.stderr, 'default', 'names the export expected');
  t.match(r.stderr, 'description, run', 'names the exports found');
});

t.test('a --bench path that does not exist exits 2 naming it', async (t) => {
  const r = await kernbench(['run', '--bench', './missing.ts'], { cwd: DIR });
  assertUsageError(t, r, 'ERR_MODULE_MISSING');
  t.match(r.stderr, 'missing.ts');
});

// Runs on: main thread (tap). Covers decision 0245 as a user meets it: the runtime's
// modules are bundled (dist/lib/runtime/) and their files re-export from the
// bundles, so a user's bench and kernel outside the package, importing kernbench by
// its package name, get the very classes the runtime makes its objects with, on the
// main thread and on executor threads alike: a Tile that tl.load returns is
// `instanceof Tile` from `kernbench/kernel`, a Tensor from `kernbench`, an error the
// runtime throws `instanceof KernbenchError`. A module loaded twice in one isolate
// fails them: tile.js loaded as its own file beside the bundle that holds it fails
// the Tile check.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { kernbench, userProject } from './helpers/cli.js';

const DIR = userProject(t, 'user-instances');

// Each check is a bit of the number a rank reports: 1 Tile (in its kernel), 2 Tensor, 4 KernbenchError.
writeFileSync(
  join(DIR, 'instances.ts'),
  `import { threadId } from 'node:worker_threads';
import { defineKernel, Tile, type TensorDesc } from 'kernbench/kernel';
import { KernbenchError, Tensor, type Torch } from 'kernbench';
import { defineBench, type BenchContext, type BenchResult } from 'kernbench/bench';

export const probe = defineKernel(import.meta.url, 'probe', async (tl, t: TensorDesc) => {
  const x = await tl.load(t);
  const out = tl.zeros(x.size, x.dtype);
  out.data.fill(x instanceof Tile ? 1 : 0);
  await tl.store(t, out);
});

export async function worker(rank: number, torch: Torch): Promise<{ bits: number; thread: number }> {
  torch.ahbm.setDevice(rank);
  const x = torch.zeros([4], { dtype: 'f32' });
  await torch.launch('probe', probe, x);
  const tile = (await x.numpy()).data[0] === 1 ? 1 : 0;
  let thrown: unknown;
  try {
    await x.item();
  } catch (e) {
    thrown = e;
  }
  return { bits: tile + (x instanceof Tensor ? 2 : 0) + (thrown instanceof KernbenchError ? 4 : 0), thread: threadId };
}

async function run(torch: Torch, ctx: BenchContext): Promise<BenchResult[]> {
  const ws = torch.spec.system.sips.count;
  const ranks = (await torch.multiprocessing.spawn(worker, { args: [], nprocs: ws })) as { bits: number; thread: number }[];
  return [{
    bench: ctx.bench, algorithm: ctx.ccl.algorithm, topology: torch.topologyName, worldSize: ws, nElem: 4, dtype: 'f32', ok: true, critNs: 0,
    lines: [], extra: { bits: ranks.map((r) => r.bits).join(','), mainThread: threadId, threads: ranks.map((r) => r.thread).join(',') },
  }];
}

export default defineBench({ description: 'which classes a user module and the runtime share', run });
`,
);

interface Extra {
  bits: string;
  mainThread: number;
  threads: string;
}

for (const threads of ['1', 'rank']) {
  t.test(`--threads ${threads}: a user's kernel and worker outside the package get the runtime's own Tile, Tensor and KernbenchError classes`, async (t) => {
    const r = await kernbench(['run', '--bench', './instances.ts', '--threads', threads, '--set', 'sip.cube_mesh.w=1', '--set', 'sip.cube_mesh.h=1', '--json'], { cwd: DIR });
    t.equal(r.exitCode, 0, `exit 0 (stderr: ${r.stderr})`);
    if (r.exitCode !== 0) return;
    const x = (JSON.parse(r.stdout) as { extra: Extra }).extra;
    const bits = x.bits.split(',').map(Number);
    t.ok(bits.length >= 2, `${bits.length} ranks`);
    t.same(bits, bits.map(() => 1 + 2 + 4), 'every rank: its Tile, its Tensor and the error it caught are instances of the classes it imported');
    t.ok(x.threads.split(',').every((id) => Number(id) !== x.mainThread), 'the ranks ran on executor threads');
  });
}

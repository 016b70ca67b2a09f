// A user's own partner-based algorithms, outside the package: the author's
// guide's recursive doubling (docs/author-guide.md, "An algorithm that
// addresses peers"), taken from the guide as written, and a user's all-to-all
// with uneven splits, in a temporary folder of their own (package.json with
// "type": "module", `kernbench` resolved through node_modules as an installed
// package is) and named by path from that folder's ccl.yaml: the all-reduce as
// the entry's module, the all-to-all as collectives.all_to_all. Their data
// against a JS reference, and the guide's law on the fully connected ideal machine.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { loadTopology } from '../lib/config/load.js';
import { topologyPath } from '../lib/config/paths.js';
import { REDUCE_OPS } from '../lib/ccl/reduce-op.js';
import { a2aUnevenWorker, a2aValue, CCL_FIXTURES, everyRank, expectedAllReduce } from './fixtures/ccl.js';
import { allReduceSweepWorker, PARTNER_FIXTURES } from './fixtures/ccl-partners.js';
import { range } from './helpers/all-to-all.js';
import { userProject } from './helpers/cli.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime({ modules: [CCL_FIXTURES, PARTNER_FIXTURES] });
t.teardown(() => rt.close());

// Runs compiled, from dist/test/: the package root is two levels up.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The guide's code block that starts with `// my_doubling.ts`, as written. */
function guideFile(): string {
  const guide = readFileSync(join(ROOT, 'docs', 'author-guide.md'), 'utf8');
  const m = /```ts\n(\/\/ my_doubling\.ts[^\n]*\n[\s\S]*?)```/.exec(guide);
  if (!m) throw new Error('docs/author-guide.md has no ```ts block starting with // my_doubling.ts');
  return m[1];
}

/** A user's pairwise all-to-all in the other order (step s sends to r - s), any split sizes. */
const MY_ALLTOALL = `import { defineAlgorithm, defineKernel } from 'kernbench/kernel';

export const meta = defineAlgorithm({
  provides: 'all_to_all',
  arrangement: 'logical',
  topologies: ['ring_1d'],
  peers: true,
  splits: 'uneven',
  summary: 'pairwise exchange, backwards',
});

const at = (sizes) => sizes.reduce((acc, n) => [...acc, acc[acc.length - 1] + n], [0]);

export const allToAll = defineKernel(import.meta.url, 'allToAll', async (tl, out, input, inSplits, outSplits) => {
  const p = tl.worldSize, r = tl.rank;
  const data = await tl.load(input);
  const inAt = at(inSplits), outAt = at(outSplits);
  const result = tl.zeros(outAt[p], out.dtype);
  result.data.set(data.data.subarray(inAt[r], inAt[r] + inSplits[r]), outAt[r]);
  for (let s = 1; s < p; s++) {
    const dst = (r - s + p) % p, src = (r + s) % p;
    const sent = inSplits[dst] > 0 ? tl.send(tl.peer(dst), data.slice(inAt[dst], inSplits[dst])) : null;
    if (outSplits[src] > 0) await tl.recv(tl.peer(src), outSplits[src], input.dtype, result.slice(outAt[src], outSplits[src]));
    if (sent) await sent;
  }
  await tl.store(out, result);
});
`;

const CCL = `defaults:
  algorithm: mine
  collectives:
    all_to_all: { module: ./my_alltoall.mjs }
algorithms:
  mine:
    module: ./my_doubling.ts
    topology: ring_1d
`;

const dir = userProject(t, 'user-partners');
writeFileSync(join(dir, 'my_doubling.ts'), guideFile());
writeFileSync(join(dir, 'my_alltoall.mjs'), MY_ALLTOALL);
writeFileSync(join(dir, 'ccl.yaml'), CCL);
const ccl = join(dir, 'ccl.yaml');

t.test("the guide's my_doubling.ts, loaded by path from the user's ccl.yaml, all-reduces every op exactly at 2, 4 and 8 ranks", async (t) => {
  const wrong: string[] = [];
  for (const p of [2, 4, 8]) {
    const cases = REDUCE_OPS.map((op) => ({ op, dtype: 'bf16' as const, nElem: 9 }));
    const r = await rt.session({ topology: 'ideal', ccl, threads: 2, sets: [`system.sips.count=${p}`] }, (torch) => torch.multiprocessing.spawn(allReduceSweepWorker, { args: [cases], nprocs: p }));
    cases.forEach((c, k) => {
      const want = expectedAllReduce(c.op, c.dtype, c.nElem, 1, () => range(p, (i) => [i, 0]));
      if (r.value.some((rank) => JSON.stringify(rank.values[k]) !== JSON.stringify(want))) wrong.push(`p=${p} ${c.op}`);
    });
  }
  t.same(wrong, [], 'cases with a wrong result');
});

t.test("the guide's my_doubling.ts takes log2(p) (alpha + N/B) on the fully connected ideal machine, to 1e-6", async (t) => {
  const ideal = loadTopology(topologyPath('ideal'));
  const alpha = ideal.timing.links.sip_sip.latency_ns;
  const B = ideal.timing.links.sip_sip.bandwidth_gb_s;
  const p = 8, nElem = 4096;
  const r = await rt.session({ topology: 'ideal', ccl, threads: 1, sets: ['system.sips.topology=fully_connected', `system.sips.count=${p}`] }, (torch) =>
    torch.multiprocessing.spawn(allReduceSweepWorker, { args: [[{ op: 'sum', dtype: 'f32', nElem }]], nprocs: p }),
  );
  const got = Math.max(...r.value.map((rank) => rank.critNs[0]));
  const law = Math.log2(p) * (alpha + (4 * nElem) / B);
  t.ok(Math.abs(got - law) / law <= 1e-6, `crit ${got} ns vs law ${law} ns`);
});

t.test("the user's all-to-all, named by the ccl.yaml's collectives.all_to_all, moves uneven blocks (zeros included), its peer channels raised by the modules' meta", async (t) => {
  const p = 5;
  const sizes = range(p, (i) => range(p, (j) => (i * 3 + j * 2) % 5));
  const r = await rt.session({ topology: 'ring_1d_6', ccl, threads: 1, sets: [] }, (torch) => torch.multiprocessing.spawn(a2aUnevenWorker, { args: [sizes, 'f16', undefined], nprocs: p }));
  t.same(
    everyRank(r.value).map((v) => v.values),
    range(p, (me) => range(p, (s) => s).flatMap((s) => range(sizes[s][me], (i) => a2aValue(s, me, i)))),
  );
});

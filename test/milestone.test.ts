// milestone_ccl (issue 4, item 9): the seed's evaluation harness writes
// summary.csv, latency and buffer-kind plots and topology diagrams (SVG), and
// its fast mode reuses the cached points. Run on two sizes to stay quick.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

t.test('the sweep writes summary.csv and SVG figures, and fast mode reuses cached points', async (t) => {
  const out = t.testdir();
  const OUT_DIR = join(out, 'milestone_ccl');
  const [first] = await rt.bench('milestone_ccl', { threads: 1, outDir: out, options: { sizes: '8,64' } });
  t.ok(first.ok, first.lines.join('\n'));
  const csv = readFileSync(join(OUT_DIR, 'summary.csv'), 'utf8').trim().split('\n');
  t.equal(csv[0], 'topology,algorithm,buffer_kind,n_elem,world_size,crit_ns,ok,digest');
  t.equal(csv.length - 1, 3 * 2 + 3 * 1, '3 topologies x 2 sizes, and 3 buffer kinds x the sizes of their grid that were swept');
  t.ok(csv.slice(1).every((row) => row.split(',')[6] === 'true'), 'every point is correct');
  for (const f of ['latency_ring_1d_6.svg', 'latency_torus_2d_2x3.svg', 'latency_mesh_2d_2x3.svg', 'buffer_kind.svg', 'topology_torus_2d_3x2.svg']) {
    t.match(readFileSync(join(OUT_DIR, f), 'utf8'), /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/, f);
  }
  const kinds = csv.slice(1).filter((r) => r.startsWith('torus_2d_3x2')).map((r) => Number(r.split(',')[5]));
  t.ok(kinds[0] < kinds[1] && kinds[1] < kinds[2], `staging in tcm < sram < hbm: ${kinds.join(' < ')}`);

  const [again] = await rt.bench('milestone_ccl', { threads: 1, outDir: out, options: { sizes: '8,64', fast: true } });
  t.match(again.lines[0], /\(9 from cache\)/);
  t.equal(readFileSync(join(OUT_DIR, 'summary.csv'), 'utf8').trim().split('\n').length, csv.length);
  t.equal(again.digest, first.digest);
});

t.test('milestone_ccl points are identical under --threads 1 and rank and under jitter', async (t) => {
  const options = { sizes: '32' };
  const outDir = t.testdir();
  const [a] = await rt.bench('milestone_ccl', { threads: 1, outDir, options });
  const [b] = await rt.bench('milestone_ccl', { threads: 'rank', outDir, options });
  const [c] = await rt.bench('milestone_ccl', { threads: 'pe', jitterSeed: 12, outDir, options });
  // Each row carries its point's run digest (outputs and every PE's virtual times).
  t.same(b.table?.rows, a.table?.rows);
  t.same(c.table?.rows, a.table?.rows);
});

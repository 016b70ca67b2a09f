// A user's own tensor-parallel block (examples/tp-layer/my_layer.ts), built
// from the public entry points only, runs from a folder outside the package
// (kernbench installed as a symlinked dependency), and its output is checked
// against a JS computation of the same block.
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { kernbenchProcess, ROOT, userProject } from './helpers/cli.js';
import { roundTo } from '../lib/dtype/index.js';

const DIR = userProject(t, 'user-layer');
copyFileSync(join(ROOT, 'examples', 'tp-layer', 'my_layer.ts'), join(DIR, 'my_layer.ts'));

const values = (n: number, k: number) => Float32Array.from({ length: n }, (_, i) => (((i * k) % 13) - 6) / 16);

/** y[0, 0] of the block in f64, rounded to f16 where the device stores. */
function firstOutput(rows: number, h: number): number {
  const x = values(rows * h, 3), w1 = values(h * 2 * h, 5), w2 = values(2 * h * h, 7);
  const row = Array.from(x.subarray(0, h));
  const rstd = 1 / Math.sqrt(row.reduce((a, v) => a + v * v, 0) / h + 1e-5);
  const n = row.map((v) => roundTo('f16', v * rstd));
  const mid = Array.from({ length: 2 * h }, (_, j) => roundTo('f16', n.reduce((a, v, p) => a + v * w1[p * 2 * h + j], 0)));
  return mid.reduce((a, v, p) => a + v * w2[p * h], 0);
}

t.test("a user's tensor-parallel block from the public API runs from a folder outside the package and computes the block", async (t) => {
  // Its own process, as a user runs it: in the tap process, after the layer tests' --threads pe
  // runs, tsx's esbuild could not be spawned once in CI (spawn ENOMEM, forking a large process).
  // --threads 1: the layout is not what is checked here, and every executor compiles the
  // user's TypeScript again (tsx), a second thread under --threads rank for nothing.
  const r = await kernbenchProcess(['run', '--bench', './my_layer.ts', '--json', '--threads', '1'], { cwd: DIR });
  t.equal(r.exitCode, 0, `exit 0 (stderr: ${r.stderr})`);
  // --json keeps a bench's own figures under `extra` (schemas/run-result.schema.json).
  const line = JSON.parse(r.stdout) as { ok: boolean; worldSize: number; extra: { flops: number; collectives: string; y0: number } };
  const out = { ok: line.ok, worldSize: line.worldSize, ...line.extra };
  // FLOPs over both ranks: up [8, 32] @ [32, 64] and down [8, 64] @ [64, 32], 2 per multiply-add.
  t.same({ ok: out.ok, ws: out.worldSize, flops: out.flops, collectives: out.collectives }, { ok: true, ws: 2, flops: 2 * 8 * 32 * 64 + 2 * 8 * 64 * 32, collectives: 'all_reduce' });
  // Two partial sums rounded to f16 and added in f16: within 3 f16 ulps of the f64 value.
  t.ok(Math.abs(out.y0 - firstOutput(8, 32)) <= 3 * 2 ** -11 * Math.max(1, Math.abs(out.y0)), `y[0] = ${out.y0}, JS ${firstOutput(8, 32)}`);
});

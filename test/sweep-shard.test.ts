// Runs on: main thread (tap). Covers: `kernbench sweep --shard i/n` and
// `kernbench merge` — a sweep run as 2 shards and merged prints, writes (--csv)
// and emits (--json) byte for byte what the unsharded sweep does; merge refuses
// shards of different sweeps, a shard twice or missing (ERR_MERGE_SHARDS, naming the
// files); --shard counts from 1: values outside 1 <= i <= n are usage errors.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { assertUsageError, kernbench } from './helpers/cli.js';
import { mergeShards } from '../lib/bench/merge.js';
import { parseShard } from '../lib/bench/sweep.js';

const DIR = mkdtempSync(join(tmpdir(), 'kernbench-shard-'));
t.teardown(() => rmSync(DIR, { recursive: true, force: true }));
const f = (name: string): string => join(DIR, name);

// 3 grid points (n_elem) on a small machine: one cube per SIP.
const SWEEP = ['sweep', '--bench', 'ccl_allreduce', '--over', 'ccl.n_elem=32,64,96', '--set', 'sip.cube_mesh.w=1', '--set', 'sip.cube_mesh.h=1', '--threads', '1'];

t.test('a sweep run as 2 shards and merged prints, writes as CSV and emits as JSON exactly what the unsharded sweep does', async (t) => {
  const [whole, wholeJson, s0, s1] = await Promise.all([
    kernbench([...SWEEP, '--csv', f('whole.csv')]),
    kernbench([...SWEEP, '--json']),
    kernbench([...SWEEP, '--shard', '1/2', '--json', '--csv', f('s0.csv')]),
    kernbench([...SWEEP, '--shard', '2/2', '--json', '--csv', f('s1.csv')]),
  ]);
  for (const r of [whole, wholeJson, s0, s1]) t.equal(r.exitCode, 0, `sweep exits 0 (stderr: ${r.stderr})`);
  t.equal(whole.stdout.split('\n').length - 2, 3, 'the unsharded table has a header and 3 rows');
  writeFileSync(f('s0.jsonl'), s0.stdout);
  writeFileSync(f('s1.jsonl'), s1.stdout);
  // Shard 1 first: merge orders by grid point, not by the order of its arguments.
  const merged = await kernbench(['merge', f('s1.csv'), f('s0.csv'), '--csv', f('merged.csv')]);
  t.equal(merged.exitCode, 0, `merge exits 0 (stderr: ${merged.stderr})`);
  t.equal(merged.stdout, whole.stdout, 'the merged table is the unsharded table');
  t.equal(readFileSync(f('merged.csv'), 'utf8'), readFileSync(f('whole.csv'), 'utf8'), 'the merged CSV is the unsharded CSV');
  const mergedJson = await kernbench(['merge', f('s0.jsonl'), f('s1.jsonl'), '--json']);
  t.equal(mergedJson.exitCode, 0);
  t.equal(mergedJson.stdout, wholeJson.stdout, 'the merged JSON lines are the unsharded JSON lines');
  // Each shard ran only its own points: shard (k mod 2) + 1.
  const points = (text: string): number[] => text.trim().split('\n').map((l) => (JSON.parse(l) as { point: number }).point);
  t.same(points(s0.stdout), [0, 2]);
  t.same(points(s1.stdout), [1]);
});

t.test('merge refuses shards of different sweeps, a shard given twice, a shard missing and a mix of CSV and JSON (ERR_MERGE_SHARDS naming the files)', async (t) => {
  // Two shards of a (fake) sweep of 3 points, and shard 1 of another sweep.
  const head = 'sweep,shard,point,ccl.n_elem,ok\n';
  writeFileSync(f('a0.csv'), `${head}aaaa,1/2,0,32,true\naaaa,1/2,2,96,true\n`);
  writeFileSync(f('a1.csv'), `${head}aaaa,2/2,1,64,true\n`);
  writeFileSync(f('b1.csv'), `${head}bbbb,2/2,1,64,true\n`);
  writeFileSync(f('a1.jsonl'), `${JSON.stringify({ sweep: 'aaaa', shard: '2/2', point: 1, 'ccl.n_elem': '64', ok: true })}\n`);
  t.same(mergeShards([f('a1.csv'), f('a0.csv')]).rows, [['32', 'true'], ['64', 'true'], ['96', 'true']], 'the good pair merges in grid order');
  const refused = (files: string[], why: string): void => {
    t.throws(() => mergeShards(files), { code: 'ERR_MERGE_SHARDS' }, why);
    try {
      mergeShards(files);
    } catch (e) {
      t.ok(files.some((x) => (e as Error).message.includes(x)), `${why}: the message names the files`);
    }
  };
  refused([f('a0.csv'), f('b1.csv')], 'different sweeps');
  refused([f('a0.csv'), f('a0.csv'), f('a1.csv')], 'a shard twice');
  refused([f('a0.csv')], 'a shard missing');
  refused([f('a0.csv'), f('a1.jsonl')], 'CSV and JSON mixed');
  t.throws(() => mergeShards([f('whole.csv')]), { code: 'ERR_MERGE_INPUT' }, 'an unsharded sweep CSV is not a shard');
});

t.test('--shard takes I/N with 1 <= I <= N, counted from 1 as jest, vitest and node --test-shard count', async (t) => {
  t.same(parseShard('1/4'), { index: 1, count: 4 });
  t.same(parseShard('4/4'), { index: 4, count: 4 });
  for (const v of ['0/4', '5/4', '-1/4', '1/0', '1', 'a/b', '01/4', '1/4/2', '']) t.throws(() => parseShard(v), { code: 'ERR_INVALID_SWEEP' }, `'${v}'`);
});

t.test('a shard file of the old 0-based numbering (shard 0/2) is refused by merge', async (t) => {
  const head = 'sweep,shard,point,ccl.n_elem,ok\n';
  writeFileSync(f('old0.csv'), `${head}cccc,0/2,0,32,true\n`);
  writeFileSync(f('old1.csv'), `${head}cccc,2/2,1,64,true\n`);
  t.throws(() => mergeShards([f('old0.csv'), f('old1.csv')]), { code: 'ERR_MERGE_INPUT' });
});

t.test('sweep --shard with more shards than grid points is a usage error', async (t) => {
  assertUsageError(t, await kernbench([...SWEEP, '--shard', '1/4']), 'ERR_INVALID_SWEEP');
});

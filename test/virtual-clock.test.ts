// Runs on: main thread (tap). Covers: lib/time/virtual-clock.ts — the one
// writer of virtual time: forward by a cost, forward to an event, never back.
import t from 'tap';
import { execa } from 'execa';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { VirtualClock } from '../lib/time/virtual-clock.js';

t.test('a clock starts at 0, advance adds a cost and advanceTo moves to a later event only', async (t) => {
  const c = new VirtualClock();
  const log: [string, number][] = [['start', c.nowPs]];
  log.push(['advance 250', c.advance(250)]);
  log.push(['event at 1000', c.advanceTo(1000)]);
  log.push(['event at 400 (earlier)', c.advanceTo(400)]);
  log.push(['advance 0', c.advance(0)]);
  log.push(['event at 1000 (same)', c.advanceTo(1000)]);
  log.push(['advance 1', c.advance(1)]);
  t.same(log, [
    ['start', 0],
    ['advance 250', 250],
    ['event at 1000', 1000],
    ['event at 400 (earlier)', 1000],
    ['advance 0', 1000],
    ['event at 1000 (same)', 1000],
    ['advance 1', 1001],
  ]);
});

t.test('a negative or fractional cost is refused and leaves the clock where it was', async (t) => {
  const c = new VirtualClock();
  c.advance(10);
  t.throws(() => c.advance(-1), { code: 'ERR_INTERNAL' });
  t.throws(() => c.advance(0.5), { code: 'ERR_INTERNAL' });
  t.throws(() => c.advance(Number.NaN), { code: 'ERR_INTERNAL' });
  t.throws(() => c.advanceTo(20.5), { code: 'ERR_INTERNAL' });
  t.equal(c.nowPs, 10);
});

t.test('two clocks are independent (one per actor)', async (t) => {
  const a = new VirtualClock();
  const b = new VirtualClock();
  a.advance(5);
  b.advanceTo(7);
  t.same([a.nowPs, b.nowPs], [5, 7]);
});

// Decision 0262: a field that starts at a plain 0 holds small integers until a time past
// 2^31 ps (2.147 ms) is stored, and then V8 gives every object of the class a new shape,
// dropping the code optimised for the old one. %HaveSameMap (V8's natives, in a child
// started with --allow-natives-syntax) says whether two objects still share a shape.
t.test("a time past 2^31 ps leaves a clock and a piece's times in the shape of fresh ones (decision 0262)", async (t) => {
  const module = (path: string): string => new URL(path, import.meta.url).href;
  const script = `
    import { VirtualClock } from '${module('../lib/time/virtual-clock.js')}';
    import { PieceTimes } from '${module('../lib/ipcq/link-timing.js')}';
    const past = 2 ** 31 + 1;
    const fresh = new VirtualClock();
    const late = new VirtualClock();
    late.advanceTo(past);
    const piece = new PieceTimes();
    const latePiece = new PieceTimes();
    for (const k of ['readyPs', 'serialPs', 'flightPs', 'joinNotBeforePs', 'sentPs']) latePiece[k] = past;
    console.log(JSON.stringify({ clock: %HaveSameMap(fresh, late), piece: %HaveSameMap(piece, latePiece), now: late.nowPs }));
  `;
  const r = await execa(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script]);
  t.same(JSON.parse(r.stdout), { clock: true, piece: true, now: 2 ** 31 + 1 });
});

// The same for a kernel's own tl: the wait a kernel reports (tl.reportWaitPs) sums times too.
// A branch's tl (tl.parallel) is made before the report, and must keep the kernel's shape.
t.test('a kernel that reports a wait past 2^31 ps keeps its tl in the shape of a fresh one (decision 0262)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernbench-tl-shape-'));
  const lib = (path: string): string => new URL(`../lib/${path}`, import.meta.url).href;
  writeFileSync(
    join(dir, 'kernel.mjs'),
    `import { defineKernel } from '${lib('public/kernel.js')}';
    export const probe = defineKernel(import.meta.url, 'probe', async (tl) => {
      let branch;
      await tl.parallel([async (b) => { branch = b; }]);
      tl.reportWaitPs(2 ** 31 + 1);
      if (!%HaveSameMap(tl, branch)) throw new Error('the kernel tl changed shape');
    });`,
  );
  // A file, not -e: the threads take the process's options, and --input-type is refused there.
  const main = `import { withTorch } from '${lib('public/index.js')}';
    import { probe } from '${pathToFileURL(join(dir, 'kernel.mjs')).href}';
    await withTorch({ topology: 'ideal', threads: 1 }, async (torch) => { await torch.launch('probe', probe, torch.zeros([4])); });
    console.log('ok');`;
  writeFileSync(join(dir, 'main.mjs'), main);
  const r = await execa(process.execPath, ['--allow-natives-syntax', join(dir, 'main.mjs')], { reject: false });
  rmSync(dir, { recursive: true, force: true });
  t.equal(r.exitCode, 0, `the kernel ran and kept its shape (stderr: ${r.stderr.slice(0, 600)})`);
  t.match(r.stdout, /ok$/);
});

t.test('a fresh clock reads 0 and prints as 0', async (t) => {
  const c = new VirtualClock();
  t.ok(c.nowPs === 0, 'equal to 0');
  t.equal(`${c.nowPs} ${String(c.nowPs)} ${c.nowPs.toFixed(3)} ${JSON.stringify(c.nowPs)}`, '0 0 0.000 0');
  t.equal(c.advance(5), 5);
});

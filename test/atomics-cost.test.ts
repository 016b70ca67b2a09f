// Runs on: main thread (tap). Covers: benches/sim/atomics-cost.ts, the script decision
// 0273 measures an atomic access with: its hand-assembled WebAssembly functions act on
// the same words as Atomics on the memory's Int32Array (so the two paths it times do
// the same thing), and the script prints its three rows and refuses a bad count.
import { execa } from 'execa';
import t from 'tap';
import { wasmAtomics } from '../benches/sim/atomics-cost.js';

t.test('the WebAssembly load, store and add address the Int32Array words Atomics does', async (t) => {
  const a = wasmAtomics();
  Atomics.store(a.words, 5, -7);
  t.equal(a.load(5 * 4), -7, 'load sees what Atomics stored');
  a.store(9 * 4, 123456789);
  t.equal(Atomics.load(a.words, 9), 123456789, 'Atomics sees what store wrote');
  t.equal(Atomics.load(a.words, 8), 0, 'and nothing beside it');
  t.equal(a.add(9 * 4, 11), 123456789, 'add returns the old value');
  t.equal(Atomics.load(a.words, 9), 123456800, 'and adds');
  t.equal(a.add(9 * 4, -123456800), 123456800);
  t.equal(a.words[9], 0);
});

t.test('the script prints a row for each access and exits by itself; a bad count exits 2', async (t) => {
  const script = new URL('../benches/sim/atomics-cost.js', import.meta.url).pathname;
  const ok = await execa('node', [script, '1'], { reject: false });
  t.equal(ok.exitCode, 0, ok.stderr);
  for (const what of ['load', 'store', 'add']) {
    t.match(ok.stdout, new RegExp(`^  Atomics\\.${what}: from JavaScript \\d+\\.\\d\\d, through a WebAssembly function \\d+\\.\\d\\d \\(\\d+\\.\\d\\d of JavaScript's\\)$`, 'm'), what);
  }
  const bad = await execa('node', [script, '0'], { reject: false });
  t.equal(bad.exitCode, 2);
  t.match(bad.stderr, /^atomics-cost: millions of accesses must be a positive integer, got '0'$/m);
});

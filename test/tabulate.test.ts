// Runs on: main thread (tap). Covers: lib/tabulate.ts, the loop that replaces
// Array.from({ length }, f) on hot paths — same elements, same order of calls.
import t from 'tap';
import { tabulate, tabulateF32 } from '../lib/tabulate.js';

t.test('tabulate gives what Array.from({ length }, f) gives, calling f once per index in order', async (t) => {
  for (const n of [0, 1, 7, 64]) {
    const calls: number[] = [];
    const got = tabulate(n, (i) => {
      calls.push(i);
      return `pe ${i * 3}`;
    });
    t.same(got, Array.from({ length: n }, (_, i) => `pe ${i * 3}`), `n = ${n}`);
    t.same(calls, Array.from({ length: n }, (_, i) => i), `n = ${n}: indices in order`);
  }
  t.ok(Array.isArray(tabulate(3, (i) => i)), 'a plain array');
});

t.test('tabulateF32 gives what Float32Array.from({ length }, f) gives (f32 rounding included)', async (t) => {
  const f = (i: number): number => 0.1 * i + 1 / 3;
  const got = tabulateF32(9, f);
  t.ok(got instanceof Float32Array);
  t.same([...got], [...Float32Array.from({ length: 9 }, (_, i) => f(i))]);
  t.equal(tabulateF32(0, f).length, 0);
});

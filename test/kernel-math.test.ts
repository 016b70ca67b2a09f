// Runs on: main thread (tap). Covers: lib/kernel/math.ts addInto, the unrolled
// loop behind tl.add and the collectives' reductions — every length around the
// unroll width, and the result written over either operand.
import t from 'tap';
import { addInto, cdiv, dot, elementwise } from '../lib/kernel/math.js';
import { Tile } from '../lib/tile/tile.js';

/** Values that are exact in f32 and differ per index, so a skipped or shifted element shows. */
function ramp(n: number, scale: number, shift: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => (i + shift) * scale);
}

t.test('addInto adds every element, whatever the length (including the tail after the unrolled loop)', async (t) => {
  for (let n = 0; n <= 11; n++) {
    const x = ramp(n, 0.5, 1);
    const y = ramp(n, 3, 7);
    const o = new Float32Array(n).fill(NaN);
    addInto(x, y, o);
    t.same([...o], [...x].map((v, i) => v + y[i]), `length ${n}`);
  }
});

t.test('addInto may write over either operand', async (t) => {
  const x = ramp(10, 0.25, 2);
  const y = ramp(10, 2, -3);
  const want = [...x].map((v, i) => v + y[i]);
  const intoX = x.slice();
  addInto(intoX, y, intoX);
  t.same([...intoX], want, 'o === x');
  const intoY = y.slice();
  addInto(x, intoY, intoY);
  t.same([...intoY], want, 'o === y');
});

t.test('addInto rounds each sum to f32, as the plain loop does', async (t) => {
  const x = new Float32Array([1, 16777216, 0.1]);
  const y = new Float32Array([2 ** -30, 1, 0.2]);
  const o = new Float32Array(3);
  addInto(x, y, o);
  t.same([...o], [Math.fround(1 + 2 ** -30), Math.fround(16777216 + 1), Math.fround(x[2] + y[2])]);
  t.equal(o[1], 16777216, 'ties to even at 2^24');
});

t.test('the tile math refuses bad operands, each with its own code', async (t) => {
  const tile = (shape: number[]) => new Tile('f32', shape, new Float32Array(shape.reduce((a, b) => a * b, 1)));
  const add = (a: number, b: number) => a + b;
  t.throws(() => elementwise('add', [1, 2], add, undefined), { code: 'ERR_INVALID_ARG_TYPE' }, 'scalars only');
  t.throws(() => elementwise('add', [tile([4]), tile([5])], add, undefined), { code: 'ERR_TILE_MISMATCH' }, 'operand sizes differ');
  t.throws(() => dot(tile([4]), tile([4, 2]), undefined), { code: 'ERR_INVALID_SHAPE' }, 'dot of a 1-D tile');
  t.throws(() => dot(tile([2, 3]), tile([4, 2]), undefined), { code: 'ERR_TILE_MISMATCH' }, 'dot: inner dimensions differ');
  t.throws(() => cdiv(7, 0), { code: 'ERR_OUT_OF_RANGE' }, 'cdiv by 0');
  t.throws(() => cdiv(7.5, 2), { code: 'ERR_OUT_OF_RANGE' }, 'cdiv of a fraction');
});

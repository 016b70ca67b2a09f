// Runs on: main thread (tap). Covers: lib/dtype — known f16 and bf16 bit
// patterns, the f16 codec against @petamoriken/float16 bit for bit, f32 and i32
// round trips, unaligned SharedArrayBuffer views, roundTo/roundArray and
// encodeDecode agreeing with encode -> decode, typed views and argument errors.
import { Float16Array } from '@petamoriken/float16';
import t from 'tap';
import { prng } from './helpers/prng.js';
import {
  bytesPerElement,
  decode,
  decodeToNumbers,
  DTYPES,
  type DType,
  encode,
  encodeDecode,
  isDType,
  roundArray,
  roundTo,
  viewOf,
} from '../lib/dtype/index.js';

// ---------------------------------------------------------------------------
// Fixtures.


/** The 16-bit pattern `encode` writes for one value (read back little-endian). */
function bits16(dt: 'f16' | 'bf16', x: number | Float32Array): number {
  const b = new Uint8Array(2);
  encode(dt, typeof x === 'number' ? [x] : x, b);
  return b[0] | (b[1] << 8);
}

/** The value `decode` reads from one 16-bit pattern stored little-endian. */
function value16(dt: 'f16' | 'bf16', bits: number): number {
  return decode(dt, Uint8Array.of(bits & 0xff, bits >>> 8))[0];
}

/** A one-element Float32Array holding exactly the f32 with these bits. */
function f32WithBits(bits: number): Float32Array {
  return new Float32Array(Uint32Array.of(bits).buffer);
}

function hex(n: number): string {
  return `0x${n.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Encode with the library (the reference), as raw f16 bits. */
function libraryF16Bits(values: ArrayLike<number>): Uint16Array {
  const ref = new Float16Array(values.length);
  ref.set(values);
  return new Uint16Array(ref.buffer);
}

/** Our f16 encoding of `values`, as raw bits. */
function f16Bits(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  encode('f16', values, new Uint8Array(out.buffer));
  return out;
}

/** Indices where two bit arrays differ, with both patterns, at most 5: a whole-array compare with a readable diff. */
function firstDiffs(inputs: ArrayLike<number>, got: Uint16Array, want: Uint16Array): string[] {
  const diffs: string[] = [];
  for (let i = 0; i < got.length && diffs.length < 5; i++) {
    if (got[i] !== want[i]) diffs.push(`${inputs[i]}: got ${hex(got[i])}, want ${hex(want[i])}`);
  }
  return diffs;
}

/**
 * f32 inputs around every f16 boundary: each finite f16 value, the midpoint to
 * the next one, and the f32 neighbours of both; plus specials.
 */
function f16EdgeCases(): Float32Array {
  const all = new Uint16Array(65536).map((_, i) => i);
  const values = decode('f16', new Uint8Array(all.buffer));
  const bits: number[] = [];
  const word = new Float32Array(1);
  const wordBits = new Uint32Array(word.buffer);
  const withNeighbours = (x: number): void => {
    word[0] = x;
    const b = wordBits[0];
    bits.push(b, b + 1, b - 1);
  };
  for (let h = 0; h < 0x7c00; h++) {
    for (const sign of [0, 0x8000]) {
      withNeighbours(values[h | sign]);
      if (h < 0x7bff) withNeighbours((values[h | sign] + values[(h + 1) | sign]) / 2);
    }
  }
  for (const x of [65504, 65519, 65520, 65536, 2 ** -24, 2 ** -25, 3 * 2 ** -26, 2 ** -14]) withNeighbours(x);
  bits.push(0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc00001, 0xffc12345, 0x7f7fffff, 0x00000001);
  return new Float32Array(Uint32Array.from(bits, (b) => b >>> 0).buffer);
}

function randomF32BitPatterns(n: number, seed: number): Float32Array {
  const next = prng(seed);
  return new Float32Array(Uint32Array.from({ length: n }, () => (next() * 2 ** 32) >>> 0).buffer);
}

/** Doubles spread over f16/bf16 range and beyond, most not exactly an f32. */
function randomDoubles(n: number, seed: number): number[] {
  const next = prng(seed);
  return Array.from({ length: n }, () => (next() < 0.5 ? -1 : 1) * (1 + next()) * 2 ** Math.floor(next() * 60 - 30));
}

/** What `t.throws` matches for a bad argument: tests assert on the code, not the message. */
const refused = (code: string) => ({ name: 'KernbenchError', code });

// ---------------------------------------------------------------------------
// The dtype list.

t.test('DTYPES lists f32, f16, bf16 and i32 with their storage sizes', async (t) => {
  t.same(
    DTYPES.map((dt) => [dt, bytesPerElement(dt)]),
    [
      ['f32', 4],
      ['f16', 2],
      ['bf16', 2],
      ['i32', 4],
    ],
  );
});

t.test('isDType accepts exactly the dtype names', async (t) => {
  t.same(
    ['f32', 'f16', 'bf16', 'i32', 'f64', 'F32', '', 16, null, undefined].map(isDType),
    [true, true, true, true, false, false, false, false, false, false],
  );
});

t.test('an unknown dtype from untyped code is rejected with ERR_INVALID_DTYPE', async (t) => {
  t.throws(() => bytesPerElement('f64' as DType), refused('ERR_INVALID_DTYPE'));
});

// ---------------------------------------------------------------------------
// f16 known bit patterns.

const F16_PATTERNS: [title: string, value: number, bits: number][] = [
  ['f16 stores 1.0 as 0x3C00', 1, 0x3c00],
  ['f16 stores -2 as 0xC000', -2, 0xc000],
  ['f16 stores its largest finite value 65504 as 0x7BFF', 65504, 0x7bff],
  ['f16 stores the smallest subnormal 2^-24 as 0x0001', 2 ** -24, 0x0001],
  ['f16 stores the largest subnormal 1023 * 2^-24 as 0x03FF', 1023 * 2 ** -24, 0x03ff],
  ['f16 stores the smallest normal 2^-14 as 0x0400', 2 ** -14, 0x0400],
  ['f16 stores +infinity as 0x7C00', Infinity, 0x7c00],
  ['f16 stores -infinity as 0xFC00', -Infinity, 0xfc00],
  ['f16 stores -0 as 0x8000', -0, 0x8000],
];
for (const [title, value, bits] of F16_PATTERNS) {
  t.test(title, async (t) => {
    t.same({ encoded: hex(bits16('f16', value)), decoded: value16('f16', bits) }, { encoded: hex(bits), decoded: value });
  });
}

t.test('f16 decodes 0x8000 to negative zero', async (t) => {
  t.ok(Object.is(value16('f16', 0x8000), -0));
});

t.test('f16 stores NaN as a NaN pattern that decodes to NaN', async (t) => {
  const bits = bits16('f16', NaN);
  t.same({ exponentAllOnes: (bits & 0x7c00) === 0x7c00, mantissaNonZero: (bits & 0x03ff) !== 0 }, { exponentAllOnes: true, mantissaNonZero: true });
  t.ok(Number.isNaN(value16('f16', bits)));
});

t.test('f16 rounds 65520, half an ulp above 65504, to infinity and 65519 to 65504', async (t) => {
  t.same([hex(bits16('f16', 65520)), hex(bits16('f16', 65519))], ['0x7C00', '0x7BFF']);
});

t.test('f16 rounds ties to even: 2049 -> 2048, 2051 -> 2052, 2^-25 -> 0', async (t) => {
  t.same(
    [2049, 2051, 2050, 2 ** -25, 3 * 2 ** -25].map((x) => value16('f16', bits16('f16', x))),
    [2048, 2052, 2050, 0, 2 ** -23],
  );
});

t.test('f16 rounds a double just above a midpoint up although its f32 rounding is the midpoint', async (t) => {
  // 2049 + 2^-20 is not an f32: rounding it to f32 first gives exactly 2049,
  // a tie that would go down to 2048. Rounded once, it is above the tie.
  t.equal(Math.fround(2049 + 2 ** -20), 2049);
  t.equal(value16('f16', bits16('f16', 2049 + 2 ** -20)), 2050);
});

// ---------------------------------------------------------------------------
// f16 against the library.

t.test('f16 decoding matches the library for all 65536 bit patterns', async (t) => {
  const all = new Uint16Array(65536).map((_, i) => i);
  const ours = decode('f16', new Uint8Array(all.buffer));
  const library = new Float16Array(all.buffer);
  const diffs: string[] = [];
  for (let i = 0; i < all.length && diffs.length < 5; i++) {
    if (!Object.is(ours[i], library[i])) diffs.push(`${hex(i)}: got ${ours[i]}, want ${library[i]}`);
  }
  t.same(diffs, []);
});

t.test('f16 encoding of 1e6 random f32 bit patterns matches the library bit for bit', async (t) => {
  const inputs = randomF32BitPatterns(1_000_000, 1);
  t.same(firstDiffs(inputs, f16Bits(inputs), libraryF16Bits(inputs)), []);
});

t.test('f16 encoding of every f16 value, midpoint and their f32 neighbours matches the library bit for bit', async (t) => {
  const inputs = f16EdgeCases();
  t.same(firstDiffs(inputs, f16Bits(inputs), libraryF16Bits(inputs)), []);
});

t.test('f16 turns a signaling NaN into a quiet NaN that keeps its sign and top payload bits', async (t) => {
  // As an IEEE f32 -> f16 conversion does; a NaN whose payload lies only in the
  // low 13 bits must not lose its NaN-ness and become 0x7C00 (infinity).
  t.same(
    [0x7f800001, 0xff800001, 0x7fa00000, 0xffa02000].map((b) => hex(bits16('f16', f32WithBits(b)))),
    ['0x7E00', '0xFE00', '0x7F00', '0xFF01'],
  );
});

t.test('f16 encoding of plain numbers matches encoding the same values from a Float32Array', async (t) => {
  const inputs = f16EdgeCases();
  t.same(firstDiffs(inputs, f16Bits(Array.from(inputs)), f16Bits(inputs)), []);
});

t.test('f16 encoding of random doubles matches the library bit for bit', async (t) => {
  const inputs = randomDoubles(200_000, 2);
  // Doubles a hair off each midpoint: their f32 rounding lands on the tie.
  const next = prng(3);
  for (let i = 0; i < 50_000; i++) {
    const mid = (Math.floor(next() * 2047) + 0.5 + 2048) * 2 ** Math.floor(next() * 20 - 21);
    inputs.push(mid * (1 + 2 ** -40), mid * (1 - 2 ** -40));
  }
  t.same(firstDiffs(inputs, f16Bits(inputs), libraryF16Bits(inputs)), []);
});

// ---------------------------------------------------------------------------
// bf16 known bit patterns.

t.test('bf16 stores 1.0 as 0x3F80', async (t) => {
  t.same({ encoded: hex(bits16('bf16', 1)), decoded: value16('bf16', 0x3f80) }, { encoded: '0x3F80', decoded: 1 });
});

t.test('bf16 rounds f32 bits to nearest with ties to even', async (t) => {
  t.same(
    [0x3f808000, 0x3f818000, 0x3f808001, 0x3f807fff, 0xbf818000].map((b) => hex(bits16('bf16', f32WithBits(b)))),
    ['0x3F80', '0x3F82', '0x3F81', '0x3F80', '0xBF82'],
  );
});

t.test('bf16 keeps f32 subnormals as bf16 subnormals', async (t) => {
  t.same(
    [0x00010000, 0x00018000, 0x00008000, 0x007f0000].map((b) => hex(bits16('bf16', f32WithBits(b)))),
    ['0x0001', '0x0002', '0x0000', '0x007F'],
  );
  t.equal(value16('bf16', 0x0001), 2 ** -133);
});

t.test('bf16 stores the infinities as 0x7F80 and 0xFF80', async (t) => {
  t.same([hex(bits16('bf16', Infinity)), hex(bits16('bf16', -Infinity))], ['0x7F80', '0xFF80']);
  t.same([value16('bf16', 0x7f80), value16('bf16', 0xff80)], [Infinity, -Infinity]);
});

t.test('bf16 keeps NaN a quiet NaN even when its payload is only in the low 16 bits', async (t) => {
  t.same(
    [0x7fc00000, 0x7f800001, 0xff800001].map((b) => hex(bits16('bf16', f32WithBits(b)))),
    ['0x7FC0', '0x7FC0', '0xFFC0'],
  );
  t.ok(Number.isNaN(value16('bf16', bits16('bf16', NaN))));
});

t.test('bf16 stores its largest finite value as 0x7F7F and rounds the largest f32 to infinity', async (t) => {
  const max = value16('bf16', 0x7f7f);
  t.equal(max, (2 - 2 ** -7) * 2 ** 127);
  t.same(
    [hex(bits16('bf16', max)), hex(bits16('bf16', f32WithBits(0x7f7f7fff))), hex(bits16('bf16', f32WithBits(0x7f7fffff)))],
    ['0x7F7F', '0x7F7F', '0x7F80'],
  );
});

// ---------------------------------------------------------------------------
// f32 and i32.

t.test('f32 round-trips random bit patterns exactly', async (t) => {
  const inputs = randomF32BitPatterns(10_000, 4).filter((x) => !Number.isNaN(x));
  const bytes = new Uint8Array(inputs.length * 4);
  encode('f32', inputs, bytes);
  t.same(decode('f32', bytes), inputs);
});

t.test('f32 keeps NaN bit patterns through encode and decode of a Float32Array', async (t) => {
  const nans = new Uint32Array([0x7fc00000, 0x7f800001, 0xffc12345]);
  const bytes = new Uint8Array(12);
  encode('f32', new Float32Array(nans.buffer), bytes);
  t.same(new Uint32Array(decode('f32', bytes).buffer), nans);
});

t.test('i32 round-trips the extremes exactly through decodeToNumbers', async (t) => {
  const inputs = [-(2 ** 31), 2 ** 31 - 1, -1, 0, 1, 2 ** 24 + 1];
  const bytes = new Uint8Array(inputs.length * 4);
  encode('i32', inputs, bytes);
  t.same(Array.from(decodeToNumbers('i32', bytes)), inputs);
});

t.test('i32 decode to f32 rounds integers above 2^24 to the nearest f32', async (t) => {
  const bytes = new Uint8Array(4);
  encode('i32', [2 ** 24 + 1], bytes);
  t.equal(decode('i32', bytes)[0], 2 ** 24);
});

t.test('encode writes little-endian bytes', async (t) => {
  const f32 = new Uint8Array(4);
  const i32 = new Uint8Array(4);
  encode('f32', [1], f32);
  encode('i32', [0x01020304], i32);
  t.same({ f32: Array.from(f32), i32: Array.from(i32), f16: bits16('f16', 1) }, { f32: [0, 0, 0x80, 0x3f], i32: [4, 3, 2, 1], f16: 0x3c00 });
});

t.test('decodeToNumbers gives the same values as decode for every float dtype', async (t) => {
  const inputs = randomDoubles(1000, 5);
  const diffs: string[] = [];
  for (const dt of ['f32', 'f16', 'bf16'] as const) {
    const bytes = new Uint8Array(inputs.length * bytesPerElement(dt));
    encode(dt, inputs, bytes);
    const wide = decodeToNumbers(dt, bytes);
    const narrow = decode(dt, bytes);
    for (let i = 0; i < inputs.length; i++) if (!Object.is(wide[i], narrow[i])) diffs.push(`${dt} ${inputs[i]}`);
  }
  t.same(diffs, []);
});

// ---------------------------------------------------------------------------
// Unaligned shared views.

t.test('encode and decode round-trip on unaligned SharedArrayBuffer views for every dtype', async (t) => {
  const values = [1, -2, 3, 256, -4096, 1024, 7, -9]; // exact in every dtype
  const results: Record<string, unknown> = {};
  for (const dt of DTYPES) {
    const size = bytesPerElement(dt);
    const sab = new SharedArrayBuffer(values.length * size + 8);
    const all = new Uint8Array(sab).fill(0xaa);
    const view = new Uint8Array(sab, 3, values.length * size);
    encode(dt, values, view);
    const aligned = new Uint8Array(values.length * size);
    encode(dt, values, aligned);
    results[dt] = {
      decoded: Array.from(decode(dt, view)),
      exact: Array.from(decodeToNumbers(dt, view)),
      sameBytesAsAligned: view.every((b, i) => b === aligned[i]),
      guardBytes: [all[2], all[3 + values.length * size]],
    };
  }
  const expected = { decoded: values, exact: values, sameBytesAsAligned: true, guardBytes: [0xaa, 0xaa] };
  t.same(results, { f32: expected, f16: expected, bf16: expected, i32: expected });
});

t.test('decode writes into the given out array and returns it', async (t) => {
  const bytes = new Uint8Array(8);
  encode('f16', [1, 2, 3, 4], bytes);
  const out = new Float32Array(4);
  t.equal(decode('f16', bytes, out), out);
  t.same(out, Float32Array.of(1, 2, 3, 4));
});

// ---------------------------------------------------------------------------
// Rounding.

t.test('roundTo matches encode then decode for random inputs of every float dtype', async (t) => {
  const inputs = [...randomDoubles(20_000, 6), ...Array.from(randomF32BitPatterns(20_000, 7)), 65520, 2 ** 200, -(2 ** -200), NaN, -0];
  const diffs: string[] = [];
  for (const dt of ['f32', 'f16', 'bf16'] as const) {
    const bytes = new Uint8Array(inputs.length * bytesPerElement(dt));
    encode(dt, inputs, bytes);
    const decoded = decodeToNumbers(dt, bytes);
    for (let i = 0; i < inputs.length && diffs.length < 5; i++) {
      if (!Object.is(roundTo(dt, inputs[i]), decoded[i])) diffs.push(`${dt} ${inputs[i]}: ${roundTo(dt, inputs[i])} vs ${decoded[i]}`);
    }
  }
  t.same(diffs, []);
});

t.test('roundTo i32 matches encode then decode for random integers in range', async (t) => {
  const next = prng(8);
  const inputs = Array.from({ length: 10_000 }, () => Math.floor(next() * 2 ** 32) - 2 ** 31);
  const bytes = new Uint8Array(inputs.length * 4);
  encode('i32', inputs, bytes);
  t.same(
    inputs.map((x) => roundTo('i32', x)),
    Array.from(decodeToNumbers('i32', bytes)),
  );
});

t.test('roundTo i32 truncates toward zero and wraps modulo 2^32', async (t) => {
  t.same(
    [2.7, -2.7, 2 ** 31, 2 ** 32 + 5, NaN, Infinity].map((x) => roundTo('i32', x)),
    [2, -2, -(2 ** 31), 5, 0, 0],
  );
});

t.test('roundArray rounds in place exactly like roundTo on each element', async (t) => {
  const inputs = randomF32BitPatterns(20_000, 9);
  const diffs: string[] = [];
  for (const dt of DTYPES) {
    const a = inputs.slice();
    roundArray(dt, a);
    for (let i = 0; i < a.length && diffs.length < 5; i++) {
      const want = Math.fround(roundTo(dt, inputs[i]));
      if (!Object.is(a[i], want)) diffs.push(`${dt} ${inputs[i]}: ${a[i]} vs ${want}`);
    }
  }
  t.same(diffs, []);
});

t.test('encodeDecode stores the bits encode then decode give, from plain numbers and from a Float32Array, for every dtype', async (t) => {
  const specials = [65520, 2 ** 200, -(2 ** -200), NaN, -0, 2049, 2051, 2 ** -25, 1e-40];
  const doubles = [...randomDoubles(20_000, 11), ...specials];
  // Built as bits: NaN payloads (a signaling one among them) reach encodeDecode as they are.
  const f32s = new Float32Array(Uint32Array.from([...new Uint32Array(randomF32BitPatterns(20_000, 12).buffer), 0x7f800001, 0xff800abc, 0x80000000]).buffer);
  const next = prng(13);
  const ints = [...Array.from({ length: 10_000 }, () => Math.floor(next() * 2 ** 32) - 2 ** 31), -0, 2 ** 31 - 1, -(2 ** 31), 2 ** 24 + 1];
  const diffs: string[] = [];
  for (const dt of DTYPES) {
    for (const [what, values] of dt === 'i32' ? [['integers', ints] as const] : [['doubles', doubles] as const, ['f32s', f32s] as const]) {
      const bytes = new Uint8Array(values.length * bytesPerElement(dt));
      encode(dt, values, bytes);
      const want = new Uint32Array(decode(dt, bytes).buffer);
      const got = new Uint32Array(encodeDecode(dt, values, new Float32Array(values.length)).buffer);
      for (let i = 0; i < want.length && diffs.length < 5; i++) if (got[i] !== want[i]) diffs.push(`${dt} ${what}[${i}] = ${values[i]}: bits ${got[i]} vs ${want[i]}`);
    }
  }
  t.same(diffs, []);
});

t.test('encodeDecode refuses a bad i32 with ERR_OUT_OF_RANGE and an out of the wrong length with ERR_INVALID_BUFFER_SIZE, writing nothing', async (t) => {
  const out = new Float32Array(2).fill(7);
  t.throws(() => encodeDecode('i32', [1, 1.5], out), refused('ERR_OUT_OF_RANGE'));
  t.same(out, Float32Array.of(7, 7));
  t.throws(() => encodeDecode('f16', [1, 2], new Float32Array(3)), refused('ERR_INVALID_BUFFER_SIZE'));
});

// ---------------------------------------------------------------------------
// Views.

t.test('viewOf returns the storage typed array of each dtype over the same bytes', async (t) => {
  const sab = new SharedArrayBuffer(32);
  const views = DTYPES.map((dt) => viewOf(dt, sab, 8, 2));
  t.same(
    views.map((v) => [v.constructor.name, v.buffer === sab, v.byteOffset, v.length]),
    [
      ['Float32Array', true, 8, 2],
      ['Uint16Array', true, 8, 2],
      ['Uint16Array', true, 8, 2],
      ['Int32Array', true, 8, 2],
    ],
  );
});

t.test('viewOf sees bytes written by encode', async (t) => {
  const sab = new SharedArrayBuffer(8);
  encode('bf16', [1, -2], new Uint8Array(sab, 4, 4));
  t.same(Array.from(viewOf('bf16', sab, 4, 2)), [0x3f80, 0xc000]);
});

t.test('viewOf rejects a misaligned byte offset with ERR_PARTIAL_ELEMENT', async (t) => {
  t.throws(() => viewOf('f32', new SharedArrayBuffer(16), 2, 1), refused('ERR_PARTIAL_ELEMENT'));
});

t.test('viewOf rejects a view past the end of the buffer with ERR_BUFFER_OUT_OF_BOUNDS', async (t) => {
  t.throws(() => viewOf('f16', new ArrayBuffer(16), 8, 5), refused('ERR_BUFFER_OUT_OF_BOUNDS'));
});

// ---------------------------------------------------------------------------
// Argument errors.

t.test('i32 encode rejects out-of-range and non-integer values with ERR_OUT_OF_RANGE and writes nothing', async (t) => {
  for (const bad of [2 ** 31, -(2 ** 31) - 1, 1.5, NaN, Infinity]) {
    const dst = new Uint8Array(8).fill(0xaa);
    t.throws(() => encode('i32', [1, bad], dst), refused('ERR_OUT_OF_RANGE'));
    t.ok(dst.every((b) => b === 0xaa), `dst untouched after ${bad}`);
  }
});

t.test('encode rejects a destination of the wrong size with ERR_INVALID_BUFFER_SIZE', async (t) => {
  t.throws(() => encode('f16', [1, 2], new Uint8Array(3)), refused('ERR_INVALID_BUFFER_SIZE'));
});

t.test('decode rejects bytes that end inside an element with ERR_PARTIAL_ELEMENT', async (t) => {
  t.throws(() => decode('f32', new Uint8Array(6)), refused('ERR_PARTIAL_ELEMENT'));
});

t.test('decode rejects an out array of the wrong length with ERR_INVALID_BUFFER_SIZE', async (t) => {
  t.throws(() => decode('f16', new Uint8Array(8), new Float32Array(3)), refused('ERR_INVALID_BUFFER_SIZE'));
});

// Runs on: any thread. Owns: the one scratch word through which a JS number is
// seen as the bits of an f32, and round-to-odd for numbers that are not f32.
//
// f16 and bf16 are produced from f32 bits with integer round-to-nearest-even.
// A number that is not exactly an f32 (a double from f64 arithmetic) would be
// rounded twice: double -> f32 (RNE) -> f16 (RNE), and a double just above an
// f16 midpoint can land exactly on the midpoint in f32 and then tie to even,
// the wrong way. Rounding to f32 *to odd* instead (truncate toward zero, then
// set the lowest bit if anything was lost) keeps the "something was lost"
// information in the sticky bit; a later RNE to any format at least 2 bits
// narrower (f16: 13 bits narrower, bf16: 16) is then exactly the single
// rounding of the original double (Boldo & Melquiond, "Emulation of FMA and
// correctly rounded sums: proved algorithms using rounding to odd", 2008).
// The test compares against @petamoriken/float16's f16round on random doubles.

const word = new Float32Array(1);
const wordBits = new Uint32Array(word.buffer);

/** Bits of `Math.fround(x)` as an unsigned 32-bit integer. */
export function f32Bits(x: number): number {
  word[0] = x;
  return wordBits[0];
}

/** The f32 whose bits are `bits` (an unsigned 32-bit integer). */
export function f32FromBits(bits: number): number {
  wordBits[0] = bits;
  return word[0];
}

/**
 * Bits of `x` rounded to f32 with round-to-odd: exact f32 values (and NaN, and
 * the infinities) keep their bits; otherwise the f32 next toward zero, with
 * its lowest bit forced to 1.
 */
export function f32BitsRoundToOdd(x: number): number {
  word[0] = x;
  const r = word[0];
  let bits = wordBits[0];
  if (r !== x && x === x) {
    // f32 bits are sign-magnitude: subtracting 1 moves one ulp toward zero.
    // |r| > |x| implies r != 0, so this never borrows into the sign bit.
    if (Math.abs(r) > Math.abs(x)) bits -= 1;
    bits |= 1;
  }
  return bits >>> 0;
}

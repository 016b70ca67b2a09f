// Runs on: any thread. Owns: how a bench message proves it arrived whole and in
// order — its sequence number in the first 32-bit word and a mark derived from
// it in the last, so a torn, stale or reordered copy fails the check.
// Payload sizes are multiples of 4 and at least 8 bytes.

const TAIL_MARK = 0x5a5a5a5a;

/** A 32-bit word view over a payload's bytes (no copy). */
export function words(bytes: Uint8Array): Int32Array {
  return new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2);
}

export function stamp(w: Int32Array, seq: number): void {
  w[0] = seq;
  w[w.length - 1] = seq ^ TAIL_MARK;
}

export function stampMatches(w: Int32Array, seq: number): boolean {
  return w[0] === seq && w[w.length - 1] === (seq ^ TAIL_MARK);
}

/** Fill a payload with a recognisable byte pattern once, so copies move real data. */
export function fillPattern(bytes: Uint8Array): void {
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) & 0xff;
}

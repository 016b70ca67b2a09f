// Runs on: main. Owns: the summary the wall-clock benches report of their timed runs.

/** The middle value (the upper middle for an even count). */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[xs.length >> 1];
}

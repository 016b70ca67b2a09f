// Runs on: any thread. Owns: the unit of virtual time and the one rounding rule.
//
// Virtual time is an integer number of picoseconds held in a JS number: exact up
// to 2^53 ps (about 2.5 hours of simulated time), so sums are exact and no
// comparison depends on float rounding. Every cost is rounded to the nearest
// picosecond exactly once, where it is computed (here), and only integers are
// added afterwards. See docs/determinism.md. A cost paid in parts (an IPCQ send
// cut into pieces) is rounded once for the whole: each part is the difference of
// the rounded running totals (lib/ipcq/outbound.ts), so the parts add up exactly.

/**
 * Zero picoseconds, as the first value of an object's field that holds virtual times.
 * V8 keeps a field in the form of the first value stored in it: after a plain 0, a
 * small integer's, which a time leaves at 2^31 ps; leaving it reshapes every object
 * of the class and sends all code optimised for the old shape back to be compiled
 * again, once in each thread (decision 0262). -0 is a double, so the field is one
 * from the start; it is 0 to every comparison and sum, and prints as 0.
 */
export const ZERO_PS = -0;

/** Picoseconds per nanosecond. */
export const PS_PER_NS = 1000;

/** A latency in ns from a topology file, as integer ps. */
export function latencyPs(ns: number): number {
  return Math.round(ns * PS_PER_NS);
}

/** Time to move `bytes` at `gbPerS` GB/s (1e9 B/s, so bytes / gbPerS = ns), as integer ps. `Infinity` is free. */
export function transferPs(bytes: number, gbPerS: number): number {
  if (gbPerS === Infinity || bytes === 0) return 0;
  return Math.round((bytes * PS_PER_NS) / gbPerS);
}

/** Time of `n` operations at `perCycle` operations per cycle on a `clockGhz` clock, as integer ps. */
export function cyclesPs(n: number, perCycle: number, clockGhz: number): number {
  if (perCycle === Infinity || n === 0) return 0;
  return Math.round((Math.ceil(n / perCycle) * PS_PER_NS) / clockGhz);
}

/** ps → ns as a float for reports (crit_ns). */
export function psToNs(ps: number): number {
  return ps / PS_PER_NS;
}

// Runs on: main. Owns: nccl-tests' text layout (src/util.cu of NVIDIA/nccl-tests
// 2.19: the parameter line, the two-group result header with its units line,
// one row per size, the two closing lines), its sizes with K/M/G suffixes, its
// type names, and each collective's bus-bandwidth factor (doc/PERFORMANCE.md).
// Pure functions of numbers: no session, no thread. Decision 0056 says where the
// layout departs from nccl-tests' (no device list, nothing after the closing lines).
//
// A row, as nccl-tests prints it (C formats):
//   "%12li  %12li  %8s  %6s  %6s" size count type redop root
//   then twice (out-of-place, in-place) "  %7s  %6s  %6s  %6g" time algbw busbw #wrong
// where time/algbw/busbw go through getFloatStr: two decimals if they fit the
// width, then one, then none, then exponent notation.
import type { DType } from '../../lib/dtype/index.js';

/** nccl-tests' type names for kernbench's dtypes (src/common.cu test_typenames). */
export const NCCL_TYPE_NAMES: Record<DType, string> = { f32: 'float', f16: 'half', bf16: 'bfloat16', i32: 'int32' };

/** The --dtype values a perf bench takes: nccl-tests' names, and kernbench's own. */
export const PERF_DTYPES = ['float', 'half', 'bfloat16', 'int32', 'f32', 'f16', 'bf16', 'i32'] as const;
export type PerfDType = (typeof PERF_DTYPES)[number];

/** kernbench's dtype for a --dtype value. */
export function kernbenchDType(name: PerfDType): DType {
  switch (name) {
    case 'float':
    case 'f32':
      return 'f32';
    case 'half':
    case 'f16':
      return 'f16';
    case 'bfloat16':
    case 'bf16':
      return 'bf16';
    case 'int32':
    case 'i32':
      return 'i32';
  }
}

/**
 * C's `%g` (six significant digits, trailing zeros dropped, exponent form below
 * 1e-4 and from 1e6 on, at least two exponent digits).
 */
export function formatG(v: number): string {
  if (v === 0) return '0';
  if (!Number.isFinite(v)) return String(v);
  const [mantissa, exp] = v.toExponential(5).split('e');
  const x = Number(exp);
  if (x < -4 || x >= 6) {
    const digits = mantissa.includes('.') ? mantissa.replace(/\.?0+$/, '') : mantissa;
    return `${digits}e${x < 0 ? '-' : '+'}${String(Math.abs(x)).padStart(2, '0')}`;
  }
  const fixed = v.toFixed(5 - x);
  return fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed;
}

/** nccl-tests' getFloatStr: `value` right-aligned in `width` with two decimals, else one, else none, else exponent form. */
export function floatCell(value: number, width: number): string {
  for (const d of [2, 1, 0]) {
    const s = value.toFixed(d);
    if (s.length <= width) return s.padStart(width);
  }
  const [mantissa, exp] = value.toExponential(width >= 7 ? 1 : 0).split('e');
  const x = Number(exp);
  return `${mantissa}e${x < 0 ? '-' : '+'}${String(Math.abs(x)).padStart(2, '0')}`.padStart(width);
}

/** What one group (out-of-place or in-place) of one row measured. */
export interface Measured {
  /** Virtual time of the collective, max over ranks, in ns. */
  critNs: number;
  algbw: number;
  busbw: number;
  /** Wrong elements over every rank; null when values were not checked (--no-data). */
  wrong: number | null;
}

export interface PerfRow {
  /** The size column: the larger of a rank's send and receive buffers, in bytes. */
  bytes: number;
  /** The count column: the element count the collective is called with. */
  count: number;
  type: string;
  redop: string;
  root: number;
  outOfPlace: Measured;
  inPlace: Measured;
}

/** The parameter line (nccl-tests' writeDeviceReport): one process, `ranks` devices, one timed iteration of a deterministic run. */
export function parameterLine(p: { ranks: number; minBytes: number; maxBytes: number; stepFactor: number; validation: boolean }): string {
  return `# nThread 1 nGpus ${p.ranks} minBytes ${p.minBytes} maxBytes ${p.maxBytes} step: ${p.stepFactor}(factor) warmup iters: 0 iters: 1 agg iters: 1 validation: ${p.validation ? 1 : 0} graph: 0 unalign: 0`;
}

const c = (s: string, w: number): string => s.padStart(w);

/** The result header: a `#` line, the group line, the column names and the units line. */
export function headerLines(): string[] {
  const lead = (a: string, b: string): string => `# ${c(a, 10)}  ${c(b, 12)}  ${c('', 8)}  ${c('', 6)}  ${c('', 6)}`;
  const names = (time: string, algbw: string, busbw: string, wrong: string): string => `  ${c(time, 7)}  ${c(algbw, 6)}  ${c(busbw, 6)}  ${c(wrong, 6)}`;
  return [
    '#',
    `${lead('', '')}           out-of-place                       in-place          `,
    `# ${c('size', 10)}  ${c('count', 12)}  ${c('type', 8)}  ${c('redop', 6)}  ${c('root', 6)}${names('time', 'algbw', 'busbw', '#wrong')}${names('time', 'algbw', 'busbw', '#wrong')} `,
    `${lead('(B)', '(elements)')}${names('(us)', '(GB/s)', '(GB/s)', '')}${names('(us)', '(GB/s)', '(GB/s)', '')} `,
  ];
}

function group(m: Measured): string {
  const wrong = m.wrong === null ? '   N/A' : c(formatG(m.wrong), 6);
  return `  ${floatCell(m.critNs / 1000, 7)}  ${floatCell(m.algbw, 6)}  ${floatCell(m.busbw, 6)}  ${wrong}`;
}

export function rowLine(r: PerfRow): string {
  return `${c(String(r.bytes), 12)}  ${c(String(r.count), 12)}  ${c(r.type, 8)}  ${c(r.redop, 6)}  ${c(String(r.root), 6)}${group(r.outOfPlace)}${group(r.inPlace)}`;
}

/**
 * The closing lines: how many groups found wrong values (nccl-tests counts a
 * group with any wrong element once), and the mean bus bandwidth over every group
 * of every row. Nothing follows them.
 */
export function footerLines(rows: PerfRow[]): string[] {
  const failed = rows.flatMap((r) => [r.outOfPlace, r.inPlace]).filter((g) => (g.wrong ?? 0) > 0).length;
  return [`# ${'Out of bounds values'.padEnd(20)} : ${failed} ${failed ? 'FAILED' : 'OK'}`, `# ${'Avg bus bandwidth'.padEnd(20)} : ${formatG(avgBusBw(rows))} `];
}

/** The mean bus bandwidth footerLines prints, as a number. */
export function avgBusBw(rows: PerfRow[]): number {
  const groups = rows.flatMap((r) => [r.outOfPlace, r.inPlace]);
  return groups.reduce((a, g) => a + g.busbw, 0) / groups.length;
}

// Runs on: any host thread. Owns: DPPolicy, the intra-device placement of a
// tensor over a SIP's cubes and PEs (seed ADR-0026). SIP placement is never
// part of a policy: it comes from torch.ahbm.setDevice(rank).
import { KernbenchError } from '../errors.js';

export const SPLIT_MODES = ['column_wise', 'row_wise', 'replicate', 'tiled'] as const;
export type SplitMode = (typeof SPLIT_MODES)[number];

export interface DPPolicyOptions {
  /** How the tensor is split over cubes. */
  cube?: SplitMode;
  /** How each cube's part is split over that cube's PEs. */
  pe?: SplitMode;
  /** Cubes used (default: 1). */
  numCubes?: number;
  /** PEs used per cube (default: 1). */
  numPes?: number;
}

/** One block of a 2-D tensor: [start, count] rows and columns, placed at (cube, pe) of the device. */
export interface Placement {
  cube: number;
  pe: number;
  rows: [number, number];
  cols: [number, number];
}

export class DPPolicy {
  readonly cube: SplitMode;
  readonly pe: SplitMode;
  readonly numCubes: number;
  readonly numPes: number;

  constructor(opts: DPPolicyOptions = {}) {
    for (const k of Object.keys(opts)) {
      if (k === 'sip' || k === 'numSips') {
        throw new KernbenchError('ERR_DPPOLICY_SIP', `DPPolicy is intra-device: '${k}' is not an option; place tensors on a SIP with torch.ahbm.setDevice(rank), got ${k}=${JSON.stringify((opts as Record<string, unknown>)[k])}`);
      }
      if (!['cube', 'pe', 'numCubes', 'numPes'].includes(k)) throw new KernbenchError('ERR_UNKNOWN_OPTION', `DPPolicy takes cube, pe, numCubes, numPes, got '${k}'`);
    }
    this.cube = checkMode('cube', opts.cube ?? 'replicate');
    this.pe = checkMode('pe', opts.pe ?? 'replicate');
    this.numCubes = checkCount('numCubes', opts.numCubes ?? 1);
    this.numPes = checkCount('numPes', opts.numPes ?? 1);
  }

  toString(): string {
    return `DPPolicy(cube=${this.cube}, pe=${this.pe}, numCubes=${this.numCubes}, numPes=${this.numPes})`;
  }

  /** The blocks of a rows x cols tensor under this policy, cube-major then PE. */
  place(rows: number, cols: number): Placement[] {
    const out: Placement[] = [];
    const cubeParts = split(this.cube, [0, rows], [0, cols], this.numCubes, this, rows, cols);
    cubeParts.forEach((cp, cube) => {
      split(this.pe, cp.rows, cp.cols, this.numPes, this, rows, cols).forEach((pp, pe) => out.push({ cube, pe, rows: pp.rows, cols: pp.cols }));
    });
    return out;
  }
}

function checkMode(field: string, m: unknown): SplitMode {
  if (!SPLIT_MODES.includes(m as SplitMode)) throw new KernbenchError('ERR_INVALID_ARG_VALUE', `DPPolicy ${field} must be one of ${SPLIT_MODES.join('|')}, got ${JSON.stringify(m)}`);
  return m as SplitMode;
}

function checkCount(field: string, n: unknown): number {
  if (!Number.isInteger(n) || (n as number) < 1) throw new KernbenchError('ERR_OUT_OF_RANGE', `DPPolicy ${field} must be a positive integer, got ${JSON.stringify(n)}`);
  return n as number;
}

function even(total: number, parts: number, what: string, policy: DPPolicy, rows: number, cols: number): number {
  if (total % parts !== 0) {
    throw new KernbenchError('ERR_UNEVEN_SPLIT', `${policy} cannot split ${what} of a [${rows}, ${cols}] tensor into ${parts} equal parts, got ${total} ${what}`);
  }
  return total / parts;
}

/** Squarest grid for `n` tiles: gr x gc with gr <= gc. */
function tileGrid(n: number): [number, number] {
  let gr = Math.floor(Math.sqrt(n));
  while (n % gr !== 0) gr--;
  return [gr, n / gr];
}

function split(mode: SplitMode, r: [number, number], c: [number, number], n: number, policy: DPPolicy, rows: number, cols: number): { rows: [number, number]; cols: [number, number] }[] {
  const parts: { rows: [number, number]; cols: [number, number] }[] = [];
  switch (mode) {
    case 'replicate':
      for (let i = 0; i < n; i++) parts.push({ rows: [...r], cols: [...c] });
      break;
    case 'column_wise': {
      const w = even(c[1], n, 'columns', policy, rows, cols);
      for (let i = 0; i < n; i++) parts.push({ rows: [...r], cols: [c[0] + i * w, w] });
      break;
    }
    case 'row_wise': {
      const h = even(r[1], n, 'rows', policy, rows, cols);
      for (let i = 0; i < n; i++) parts.push({ rows: [r[0] + i * h, h], cols: [...c] });
      break;
    }
    case 'tiled': {
      const [gr, gc] = tileGrid(n);
      const h = even(r[1], gr, 'rows', policy, rows, cols);
      const w = even(c[1], gc, 'columns', policy, rows, cols);
      for (let i = 0; i < gr; i++) for (let j = 0; j < gc; j++) parts.push({ rows: [r[0] + i * h, h], cols: [c[0] + j * w, w] });
      break;
    }
    default: {
      const never: never = mode;
      throw new TypeError(`unknown split mode ${String(never)}`);
    }
  }
  return parts;
}

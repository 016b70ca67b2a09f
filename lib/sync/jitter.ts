// Runs on: every thread that hosts actors. Owns: the scheduling-jitter mode
// (KERNBENCH_JITTER=<seed>), which perturbs wall-clock interleavings at every
// synchronisation point so tests can show that nothing observable depends on them.
//
// Each thread draws from its own seeded xorshift stream; the draws decide
// between continuing, yielding to the event loop, and sleeping up to 1 ms.
// Observable output must not change whatever the draws are (DESIGN §4).

import { KernbenchError } from '../errors.js';
import { ownSetImmediate, ownSetTimeout } from './own-timers.js';

export const JITTER_ENV = 'KERNBENCH_JITTER';

export function jitterSeedFromEnv(env: NodeJS.ProcessEnv = process.env): number | null {
  const v = env[JITTER_ENV];
  if (v === undefined || v === '' || v === '0') return null;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new KernbenchError('ERR_INVALID_ENV', `${JITTER_ENV} must be a non-negative integer seed, got '${v}'`);
  return n;
}

export class Jitter {
  private s: number;

  constructor(seed: number, stream: number) {
    // Mix seed and stream so threads draw different sequences; never zero.
    this.s = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(stream + 1, 0xc2b2ae35)) | 1;
  }

  private next(): number {
    let x = this.s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x;
    return (x >>> 0) / 0x100000000;
  }

  /** A synchronisation point: continue (70%), yield (25%), or sleep up to 1 ms (5%). */
  async point(): Promise<void> {
    const r = this.next();
    if (r < 0.7) return;
    if (r < 0.95) {
      await new Promise<void>((res) => ownSetImmediate(res));
      return;
    }
    const ms = this.next();
    await new Promise<void>((res) => ownSetTimeout(res, ms < 0.5 ? 0 : 1));
  }
}

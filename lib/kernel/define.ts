// Runs on: any thread. Owns: how a kernel is named so that any executor can
// import it. A kernel is an async function exported from a module; the module
// URL and export name travel in the launch command, never the function.
import type { KernelContext } from './context.js';

export interface KernelRef {
  /** `import.meta.url` of the module that exports the kernel. */
  module: string;
  /** The export's name in that module. */
  exportName: string;
}

export type KernelFn<A extends unknown[]> = (tl: KernelContext, ...args: A) => Promise<void>;

export interface Kernel<A extends unknown[] = never[]> {
  readonly ref: KernelRef;
  readonly fn: KernelFn<A>;
}

/** Declare a kernel: `export const ring = defineKernel(import.meta.url, 'ring', async (tl, ...) => {...})`. */
export function defineKernel<A extends unknown[]>(module: string, exportName: string, fn: KernelFn<A>): Kernel<A> {
  return Object.freeze({ ref: Object.freeze({ module, exportName }), fn });
}

export function isKernel(x: unknown): x is Kernel<unknown[]> {
  return typeof x === 'object' && x !== null && 'ref' in x && 'fn' in x && typeof (x as { fn: unknown }).fn === 'function';
}

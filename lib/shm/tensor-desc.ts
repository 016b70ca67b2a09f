// Runs on: any thread. Owns: the JSON-safe description of a device tensor —
// its shards with structural (sip, cube, pe) coordinates (no flat index) — as
// it travels in launch commands from a host to the executors.
import type { DType } from '../dtype/index.js';

export type SpaceName = 'hbm' | 'sram' | 'tcm';

export interface ShardDesc {
  sip: number;
  cube: number;
  /** The PE that owns the shard (processes it; holds it when the space is TCM). */
  pe: number;
  space: SpaceName;
  /** Byte offset of the shard's bytes in the session arena. */
  arenaOffset: number;
  /** Byte offset inside its memory space instance (what the device would see). */
  deviceOffset: number;
  nbytes: number;
  /** The block of the global 2-D tensor this shard holds: [start, count] of rows and of columns. */
  rows: [number, number];
  cols: [number, number];
}

export interface TensorDesc {
  kind: 'tensor';
  name: string;
  dtype: DType;
  shape: number[];
  shards: ShardDesc[];
}

export function isTensorDesc(x: unknown): x is TensorDesc {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'tensor';
}

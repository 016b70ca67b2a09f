// Runs on: main. Owns: the run digest — one hash over the output tensors and
// every PE's kernel records (start and end virtual times, status), which the
// determinism contract says must be bit-identical across runs and layouts.
import { createHash } from 'node:crypto';
import type { PeRecord } from '../session/session.js';

/** 16 hex digits, or 'none' when there is nothing to hash (a bench that measures wall time only). */
export function runDigest(outputs: readonly (Float32Array | Float64Array)[], records: readonly PeRecord[]): string {
  if (outputs.length === 0 && records.length === 0) return 'none';
  const h = createHash('sha256');
  for (const o of outputs) {
    h.update(`out:${o.length};`);
    h.update(new Uint8Array(o.buffer, o.byteOffset, o.byteLength));
  }
  for (const r of records) h.update(`pe:${r.pe}:${r.seq}:${r.startPs}:${r.endPs}:${r.status}:${r.tag};`);
  return h.digest('hex').slice(0, 16);
}

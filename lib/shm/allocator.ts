// Runs on: any host thread. Owns: allocation of tensor shards in the session's
// memory store. Backing bytes come from one shared arena (a bump pointer in
// ctl); capacity is checked per memory-space instance (a cube's HBM or SRAM, a
// PE's TCM) against the topology, so a tensor that would not fit on the device
// is refused even though the arena has room.
//
// Timing-only mode (--no-data) makes the session with an arena of 0 bytes
// (lib/config/plan.ts): allocations are still placed and checked against device
// capacity (same device offsets, same out-of-memory errors), but get no backing
// bytes (arenaOffset -1), so a run may hold more tensor data than this host has.
// Nothing reads or writes tensor bytes in that mode (kernel loads and stores,
// Tensor.copy_ and numpy skip them).
import { KernbenchError } from '../errors.js';
import { HEADER, PE } from './layout.js';
import type { SharedState } from './shared-state.js';
import type { Machine } from '../topology/machine.js';
import type { SpaceName } from './tensor-desc.js';

const ALIGN = 64;

export interface Allocation {
  /** Byte offset of the backing bytes in the session arena; -1 when the arena backs nothing (timing-only mode). */
  arenaOffset: number;
  deviceOffset: number;
}

export function allocate(sh: SharedState, m: Machine, where: { sip: number; cube: number; pe: number; space: SpaceName }, nbytes: number): Allocation {
  const size = Math.max(ALIGN, Math.ceil(nbytes / ALIGN) * ALIGN);
  const L = sh.layout;
  const cubeGlobal = where.sip * m.cubesPerSip + where.cube;
  const word = where.space === 'tcm' ? L.pe(m.peId(where), PE.TCM_TOP) : L.allocTop(cubeGlobal, where.space === 'sram' ? 0 : 1);
  const capacity = m.topology.timing.memory[where.space].bytes;
  // A cube's SRAM/HBM top counts ALIGN-byte units: an Int32 word of bytes wraps at 2 GiB,
  // and an HBM holds 16 GiB (reachable in timing-only mode, where no arena caps it).
  // A PE's TCM top counts bytes (lib/pe/pe-runtime.ts releases scratch bytes from it).
  const unit = where.space === 'tcm' ? 1 : ALIGN;
  const deviceOffset = Atomics.add(sh.ctl, word, size / unit) * unit;
  if (deviceOffset + size > capacity) {
    Atomics.sub(sh.ctl, word, size / unit);
    throw new KernbenchError(
      'ERR_OUT_OF_MEMORY',
      `${where.space.toUpperCase()} of (sip ${where.sip}, cube ${where.cube}${where.space === 'tcm' ? `, pe ${where.pe}` : ''}) holds ${capacity} bytes with ${deviceOffset} in use, got a request for ${nbytes}`,
    );
  }
  if (sh.arena.length === 0) return { arenaOffset: -1, deviceOffset };
  const arenaOffset = Atomics.add(sh.ctl, HEADER.ARENA_TOP, size);
  if (arenaOffset + size > sh.arena.length) {
    throw new KernbenchError('ERR_OUT_OF_MEMORY', `the session arena (${sh.arena.length} bytes of host memory backing all devices) is full, got a request for ${nbytes}`);
  }
  return { arenaOffset, deviceOffset };
}

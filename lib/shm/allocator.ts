// Runs on: any host thread. Owns: allocation of tensor shards in the session's
// memory store. Backing bytes come from one shared arena (a bump pointer in
// ctl); capacity is checked per memory-space instance (a cube's HBM or SRAM, a
// PE's TCM) against the topology, so a tensor that would not fit on the device
// is refused even though the arena has room.
import { KernbenchError } from '../errors.js';
import { HEADER, PE } from './layout.js';
import type { SharedState } from './shared-state.js';
import type { Machine } from '../topology/machine.js';
import type { SpaceName } from './tensor-desc.js';

const ALIGN = 64;

export interface Allocation {
  arenaOffset: number;
  deviceOffset: number;
}

export function allocate(sh: SharedState, m: Machine, where: { sip: number; cube: number; pe: number; space: SpaceName }, nbytes: number): Allocation {
  const size = Math.max(ALIGN, Math.ceil(nbytes / ALIGN) * ALIGN);
  const L = sh.layout;
  const cubeGlobal = where.sip * m.cubesPerSip + where.cube;
  const word = where.space === 'tcm' ? L.pe(m.peId(where), PE.TCM_TOP) : L.allocTop(cubeGlobal, where.space === 'sram' ? 0 : 1);
  const capacity = m.topology.timing.memory[where.space].bytes;
  const deviceOffset = Atomics.add(sh.ctl, word, size);
  if (deviceOffset + size > capacity) {
    Atomics.sub(sh.ctl, word, size);
    throw new KernbenchError(
      'ERR_OUT_OF_MEMORY',
      `${where.space.toUpperCase()} of (sip ${where.sip}, cube ${where.cube}${where.space === 'tcm' ? `, pe ${where.pe}` : ''}) holds ${capacity} bytes with ${deviceOffset} in use, got a request for ${nbytes}`,
    );
  }
  const arenaOffset = Atomics.add(sh.ctl, HEADER.ARENA_TOP, size);
  if (arenaOffset + size > sh.arena.length) {
    throw new KernbenchError('ERR_OUT_OF_MEMORY', `the session arena (${sh.arena.length} bytes of host memory backing all devices) is full, got a request for ${nbytes}`);
  }
  return { arenaOffset, deviceOffset };
}

// Runs on: the coordinator thread (pure logic over shared views; tested
// without threads). Owns: the shared memory channels — each cube's SRAM and
// HBM — and the order in which PEs' accesses are served.
//
// A PE that accesses a cube's SRAM or HBM publishes a request (virtual time,
// bytes, space, cube) and waits. The coordinator grants requests only when the
// session is quiescent — every actor is blocked or idle, nothing in flight
// (the same exact snapshot the deadlock detector takes). In a quiescent state
// nothing can happen without a grant, and that state is a deterministic
// function of the program (every ring is a Kahn channel), so the grants, and
// everything after them, are deterministic too (docs/determinism.md).
//
// At each quiescent state it grants every pending request whose time is the
// earliest pending time, in PE order: any request that appears later comes
// from work those grants enable, at a virtual time no earlier than theirs.
// A channel serves one access at a time:
//   start = max(request time, channel free);  channel free = start + bytes / bandwidth
//   done  = start + latency + bytes / bandwidth
import { GRANT, PE } from '../shm/layout.js';
import type { SharedState } from '../shm/shared-state.js';
import type { Machine } from '../topology/machine.js';
import { latencyPs, transferPs } from '../time/virtual-time.js';

export interface PendingRequest {
  pe: number;
  atPs: number;
  bytes: number;
  space: 0 | 1;
  cube: number;
  seq: number;
}

export class MemoryChannels {
  /** Virtual time each (cube, space) channel becomes free. */
  private readonly free: Float64Array;

  constructor(private readonly m: Machine) {
    this.free = new Float64Array(m.sips * m.cubesPerSip * 2);
  }

  pending(sh: SharedState): PendingRequest[] {
    const L = sh.layout;
    const out: PendingRequest[] = [];
    for (let pe = 0; pe < L.dims.pes; pe++) {
      const seq = Atomics.load(sh.ctl, L.pe(pe, PE.REQ_SEQ));
      if (seq > Atomics.load(sh.ctl, L.pe(pe, PE.GRANT_SEQ))) {
        const t = sh.times;
        out.push({ pe, seq, atPs: t[L.grant(pe, GRANT.AT_PS)], bytes: t[L.grant(pe, GRANT.BYTES)], space: t[L.grant(pe, GRANT.SPACE)] as 0 | 1, cube: t[L.grant(pe, GRANT.CUBE)] });
      }
    }
    return out;
  }

  /** Grant the earliest pending requests (call only in a quiescent state). Returns the PEs granted. */
  grantEarliest(sh: SharedState, pending: PendingRequest[]): number[] {
    if (pending.length === 0) return [];
    const L = sh.layout;
    const tmin = Math.min(...pending.map((r) => r.atPs));
    const granted: number[] = [];
    for (const r of pending) {
      if (r.atPs !== tmin) continue; // pending is in PE order already
      const mem = this.m.topology.timing.memory[r.space === 1 ? 'hbm' : 'sram'];
      const ch = r.cube * 2 + r.space;
      const busy = transferPs(r.bytes, mem.bandwidth_gb_s);
      const start = Math.max(r.atPs, this.free[ch]);
      this.free[ch] = start + busy;
      sh.times[L.grant(r.pe, GRANT.DONE_PS)] = start + latencyPs(mem.latency_ns) + busy;
      Atomics.store(sh.ctl, L.pe(r.pe, PE.GRANT_SEQ), r.seq);
      granted.push(r.pe);
    }
    return granted;
  }
}

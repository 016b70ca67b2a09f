// Runs on: any thread (executors use it on every op). Owns: what each modelled
// operation costs in virtual time, computed from the topology's timing section.
// Every function returns integer picoseconds (rounded once, see lib/time).
import { PairCache } from './pair-cache.js';
import type { MemorySpaceName, Topology } from './schema.js';
import { cyclesPs, latencyPs, transferPs } from '../time/virtual-time.js';
import type { Machine } from './machine.js';

export interface TransferCost {
  /** Time the payload occupies the link (serialisation, bytes / beta). */
  serialPs: number;
  /** Time from the last byte leaving to its arrival (hops * alpha). */
  flightPs: number;
}

export class CostModel {
  private readonly t: Topology['timing'];
  readonly dmaSetupPs: number;

  constructor(readonly machine: Machine) {
    this.t = machine.topology.timing;
    this.dmaSetupPs = latencyPs(this.t.dma.setup_ns);
    this.links = new PairCache(machine.totalPes);
  }

  /** One access of `bytes` to a memory space (latency once, then bandwidth). */
  memoryPs(space: MemorySpaceName, bytes: number): number {
    const m = this.t.memory[space];
    return latencyPs(m.latency_ns) + transferPs(bytes, m.bandwidth_gb_s);
  }

  /** Does an access to this space occupy a shared channel (finite bandwidth), so concurrent accesses queue? */
  contended(space: MemorySpaceName): boolean {
    return this.t.memory[space].bandwidth_gb_s !== Infinity;
  }

  /** An elementwise op over `n` elements on the vector unit. */
  vectorPs(n: number): number {
    return cyclesPs(n, this.t.pe.vector_lanes, this.t.pe.clock_ghz);
  }

  /** An (m x k) @ (k x n) product on the matrix unit; f32 runs at half the f16/bf16 rate. */
  gemmPs(m: number, n: number, k: number, f32: boolean): number {
    const macs = this.t.pe.gemm_macs_per_cycle;
    return cyclesPs(m * n * k, f32 ? macs / 2 : macs, this.t.pe.clock_ghz);
  }

  /** A transfer of `bytes` between two PEs: cut-through, so k hops cost k*alpha + bytes/beta. */
  transfer(from: number, to: number, bytes: number): TransferCost {
    const link = this.link(from, to);
    return { serialPs: transferPs(bytes, link.gbPerS), flightPs: link.flightPs };
  }

  /** Serialisation time of `bytes` on the link from PE `from` to PE `to` (no allocation: IPCQ hot path). */
  serialPs(from: number, to: number, bytes: number): number {
    return transferPs(bytes, this.link(from, to).gbPerS);
  }

  /** Bandwidth (GB/s) of the link from PE `from` to PE `to`: for callers that round a running byte count themselves (lib/ipcq/outbound.ts). */
  bandwidthGbPerS(from: number, to: number): number {
    return this.link(from, to).gbPerS;
  }

  /** Flight time (hops * alpha) from PE `from` to PE `to`. */
  flightPs(from: number, to: number): number {
    return this.link(from, to).flightPs;
  }

  // A route's costs, memoised per pair, bounded (an all-to-all's PEs talk to every PE).
  private readonly links: PairCache<{ gbPerS: number; flightPs: number }>;

  private link(from: number, to: number): { gbPerS: number; flightPs: number } {
    let l = this.links.get(from, to);
    if (!l) {
      const r = this.machine.route(from, to);
      const c = this.t.links[r.link];
      // A route is as fast as its narrowest link (1 on every link of a uniform fabric).
      const scale = r.link === 'sip_sip' ? this.machine.routeBandwidthScale(from, to) : 1;
      l = { gbPerS: scale === 1 ? c.bandwidth_gb_s : c.bandwidth_gb_s * scale, flightPs: r.hops * latencyPs(c.latency_ns) };
      this.links.set(from, to, l);
    }
    return l;
  }
}

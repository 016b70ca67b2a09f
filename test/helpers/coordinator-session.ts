// Runs on: main thread (tap). Owns: what the tests that drive the coordinator's worker
// script through shared memory, as executors drive it, set up: a one-thread session's
// plan and shared state on the ideal topology, and a link flow asked for as
// ArbitratedLinks.cross asks (test/coordinator-fault.test.ts, test/coordinator-doorbell.test.ts).
import { loadCcl, loadTopology } from '../../lib/config/load.js';
import { DEFAULT_CCL_FILE, topologyPath } from '../../lib/config/paths.js';
import { buildPlan } from '../../lib/config/plan.js';
import { FLOW, HEADER, PE } from '../../lib/shm/layout.js';
import { markFlowRequest } from '../../lib/shm/flow-requests.js';
import { SharedState } from '../../lib/shm/shared-state.js';
import { Machine } from '../../lib/topology/machine.js';

/** The coordinator's worker script (dist), started by the test itself. */
export const COORDINATOR = new URL('../../lib/coordinator/coordinator-worker.js', import.meta.url);

/** A `--threads 1 --no-data` session of the ideal topology with `sets`: its plan, machine and fresh shared state. */
export function coordinatorSession(sets: string[]) {
  const topology = loadTopology(topologyPath('ideal'), sets);
  const ccl = { ...loadCcl(DEFAULT_CCL_FILE), module_url: '' };
  const plan = buildPlan({ topologyName: 'ideal', topology, ccl, threads: 1, jitterSeed: null, noData: true });
  return { plan, machine: new Machine(topology), sh: SharedState.create(plan.dims) };
}

/**
 * PE 0's east channel asks for a link flow to `peer` from `startPs` (1 000 ps of
 * serialisation, 100 ps of latency), as ArbitratedLinks.cross does; nobody is rung.
 */
export function askFlow(sh: SharedState, peer: number, startPs: number): void {
  const L = sh.layout;
  sh.times[L.flow(0, 0, FLOW.START_PS)] = startPs;
  sh.times[L.flow(0, 0, FLOW.SERIAL_PS)] = 1000;
  sh.times[L.flow(0, 0, FLOW.PEER)] = peer;
  sh.times[L.flow(0, 0, FLOW.LATENCY_PS)] = 100;
  sh.times[L.flow(0, 0, FLOW.JOIN_MIN_PS)] = 0;
  Atomics.add(sh.ctl, HEADER.FLOWS_PENDING, 1);
  Atomics.add(sh.ctl, L.pe(0, PE.FLOW_REQ), 1);
  markFlowRequest(sh.ctl, L, 0);
}

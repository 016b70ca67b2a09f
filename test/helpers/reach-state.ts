// Runs on: main (tests). Hand-set shared state for the reach of links (test/cycle-floors,
// test/range-floors): a machine of a topology file with its links and shared words, and a
// PE's kernel published active at a clock as the scheduler publishes it.
import { loadTopology } from '../../lib/config/load.js';
import { topologyPath } from '../../lib/config/paths.js';
import { markActive } from '../../lib/shm/active-actors.js';
import { ACTOR, ACTOR_STATE } from '../../lib/shm/layout.js';
import { SharedState } from '../../lib/shm/shared-state.js';
import { actorActive } from '../../lib/sync/pe-floor.js';
import { Links } from '../../lib/topology/links.js';
import { Machine } from '../../lib/topology/machine.js';

/** The machine of topology file `topology` with `sets`, its links, and shared words sized for it. */
export function reachMachine(topology: string, sets: readonly string[]): { m: Machine; links: Links; sh: SharedState } {
  const m = new Machine(loadTopology(topologyPath(topology), [...sets]));
  const links = new Links(m);
  const sh = SharedState.create({ executors: 1, pes: m.totalPes, hosts: m.sips + 1, nSlots: 2, slotSize: 64, cubes: m.sips * m.cubesPerSip, arenaBytes: 1024, links: links.count });
  return { m, links, sh };
}

/** PE `pe`'s kernel active at clock `clockPs` (its floor), as the scheduler publishes it. */
export function activeAt(sh: SharedState, pe: number, clockPs: number): void {
  const L = sh.layout;
  const a = L.peActor(pe);
  sh.times[L.clock(a)] = clockPs;
  actorActive(sh, a, true);
  Atomics.store(sh.ctl, L.actor(a, ACTOR.STATE), ACTOR_STATE.BLOCKED);
  markActive(sh.ctl, L, a, true);
}

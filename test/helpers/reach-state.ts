// Runs on: main (tests). Hand-set shared state for the reach of links (test/cycle-floors,
// test/range-floors): a machine of a topology file with its links and shared words, and a
// PE's kernel published active at a clock as the scheduler publishes it.
import { loadTopology } from '../../lib/config/load.js';
import { topologyPath } from '../../lib/config/paths.js';
import { markActive } from '../../lib/shm/active-actors.js';
import { ACTOR, ACTOR_STATE } from '../../lib/shm/layout.js';
import { SharedState } from '../../lib/shm/shared-state.js';
import { actorActive, peFloor } from '../../lib/sync/pe-floor.js';
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

/**
 * A run of floors that only rise, as a check meets them (test/cycle-floors, test/range-floors):
 * every PE active at `start(rand)` but a share `idle` of them (-Infinity floors: the horizon
 * alone bounds them); each round three active PEs move on by up to two latencies `a`, and
 * the kept horizon, none for the first 300 rounds, then rises up to eight latencies behind
 * the lowest floor (a check keeps the bounds it proved with it).
 */
export class FloorWalk {
  readonly active: number[] = [];
  /** The lowest active floor and the kept horizon, after the last round. */
  lowest = -Infinity;
  h = -Infinity;

  constructor(
    private readonly sh: SharedState,
    pes: number,
    private readonly rand: () => number,
    private readonly a: number,
    idle: number,
    start: (rand: () => number) => number,
  ) {
    for (let pe = 0; pe < pes; pe++) if (rand() >= idle) this.active.push(pe);
    for (const pe of this.active) activeAt(sh, pe, start(rand));
  }

  /** Round `round`: three PEs move on, then the lowest floor and the horizon are read again. */
  next(round: number): void {
    const { sh, rand, a, active } = this;
    for (let j = 0; j < 3; j++) {
      const pe = active[Math.floor(rand() * active.length)];
      activeAt(sh, pe, peFloor(sh, pe) + Math.floor(rand() * 2 * a));
    }
    this.lowest = Math.min(...active.map((pe) => peFloor(sh, pe)));
    if (round >= 300) this.h = Math.max(this.h, this.lowest - Math.floor(rand() * 8 * a));
  }
}

// Runs on: any thread. The `kernbench/topology` entry point: what a SIP
// topology kind is written with (a user's own kind, named by path from a
// topology file's system.sips.topology; decisions 0018 and 0050). Re-exports only.
export {
  defineSipTopology,
  rowGrid,
  explicitGrid,
  ringNeighbour,
  dimensionOrderRoute,
  bfsRoute,
  xy,
  step,
  EAST,
  WEST,
  NORTH,
  SOUTH,
  type SipTopology,
  type SipTopologyDefinition,
  type SipGrid,
  type SipCount,
  type GridProblem,
} from '../topology/define-kind.js';
export { memoRoutes, ecmpWay, type SipFabric, type FabricEnds } from '../topology/fabric.js';
/** zod, for a kind's `params`: the same zod kernbench checks the schema with. */
export { z } from 'zod';

// Runs on: any thread. Owns: which SIP topology kinds exist — the module files
// of lib/topology/kinds/ (compiled: dist/lib/topology/kinds/), each named by its
// file name — loaded, every one. There is no list to keep: adding a kind is
// adding a file (lib/topology/define-kind.ts says what it exports).
//
// Topology files are loaded synchronously (lib/config/load.ts loadTopology), and
// the schema, Machine and the CCL worlds ask a kind synchronously. So this
// module imports every file of the folder once, with a top-level await, while
// it loads: every module that imports it (statically) runs after the kinds are
// in. Decision 0018 weighs the alternatives. The lookups are ./kind-registry.ts's:
// a thread that needs one kind only (the coordinator's Machine) imports that
// instead and loads its kind first (decision 0205).
import type { SipTopology, SipTopologyKind } from './define-kind.js';
import { findSipKind, loadShippedKind, shippedKindNames } from './kind-registry.js';

export { findSipKind, isKindModulePath, registerSipKind, sipKind, type KindModuleUrl } from './kind-registry.js';

await Promise.all(shippedKindNames().map(loadShippedKind));

/** Names of the shipped kinds, sorted (the file names of lib/topology/kinds/). */
export function sipKindNames(): SipTopologyKind[] {
  return [...shippedKindNames()];
}

/** Every shipped kind, in name order. */
export function sipKinds(): SipTopology[] {
  return shippedKindNames().map((name) => findSipKind(name) as SipTopology);
}

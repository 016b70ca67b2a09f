// Runs on: any thread (main when it loads a topology file; executors and the
// coordinator before they build a session's Machine). Owns: a user's own SIP
// topology kind, named by path in a topology file (`system.sips.topology:
// ./my_kind.ts`): importing its module on this thread, checking its `kind`
// export, and registering it in the kind catalog, so that the schema, Machine
// and the CCL worlds find it synchronously like a shipped kind (decision 0050;
// decision 0018 left this open).
//
// A loaded topology carries the module's file URL (lib/config/load.ts); every
// thread that builds a Machine from it first awaits `ensureSipKind`. A shipped
// kind is loaded the same way on a thread that has not loaded the kind catalog
// (the coordinator: decision 0205), by its module's URL in lib/topology/kinds/. Executors
// import this module at start, and only main reads topology files: the file
// loader (and with it the YAML parser and the CCL schema) is imported when
// `loadTopologyWithKind` first runs, never on an executor (decision 0130).
import { fileURLToPath } from 'node:url';
import type { Topology } from '../config/topology-schema.js';
import { KernbenchError } from '../errors.js';
import { isSipTopology, type SipTopology } from '../topology/define-kind.js';
import { findSipKind, loadShippedKind, registerSipKind, shippedKindAt, shippedKindUrl, type KindModuleUrl } from '../topology/kind-registry.js';
import { importModule } from './user-module.js';

/** One import per module per thread, however many sessions ask. */
const loading = new Map<string, Promise<SipTopology>>();

/** Import, check and register the kind module at file URL `url` on this thread (a shipped kind's, or a user's). Its ERR_MODULE_* errors name the file. */
export function loadSipKindModule(url: KindModuleUrl): Promise<SipTopology> {
  const shipped = shippedKindAt(url);
  if (shipped !== undefined) return loadShippedKind(shipped);
  let p = loading.get(url);
  if (p === undefined) {
    p = importModule(url).then((mod) => {
      if (!isSipTopology(mod.kind)) {
        const found = Object.keys(mod).sort();
        throw new KernbenchError('ERR_MODULE_EXPORT', `${fileURLToPath(url)} is not a SIP topology kind module: kind: missing or not made with defineSipTopology. Expected exports: kind (defineSipTopology({name, summary, grid, neighbour, hops | fabric})); found: ${found.length ? found.join(', ') : 'none'}`);
      }
      registerSipKind(url, mod.kind);
      return mod.kind;
    });
    loading.set(url, p);
  }
  return p;
}

/** The URL of the kind module `topology` names and this thread has not loaded (a user's, or a shipped kind's), or undefined (loaded, or no kind of that name). */
export function sipKindToLoad(topology: Topology): KindModuleUrl | undefined {
  const k = topology.system.sips.topology;
  if (findSipKind(k) !== undefined) return undefined;
  return k.startsWith('file:') ? (k as KindModuleUrl) : shippedKindUrl(k);
}

/** Load `topology`'s kind on this thread if it has not (at once when it has). */
export async function ensureSipKind(topology: Topology): Promise<void> {
  const url = sipKindToLoad(topology);
  if (url !== undefined) await loadSipKindModule(url);
}

/**
 * loadTopology, with a kind named by path loaded first, so that the file is
 * checked by that kind's rules (grid, params, fabric) with every problem at its
 * file:line:col, as for a shipped kind.
 */
export async function loadTopologyWithKind(file: string, sets: readonly string[] = []): Promise<Topology> {
  const { loadTopology } = await import('../config/load.js');
  const first = loadTopology(file, sets);
  const url = sipKindToLoad(first);
  if (url === undefined) return first;
  await loadSipKindModule(url);
  return loadTopology(file, sets);
}

// Runs on: any thread. Owns: which SIP topology kinds exist — the module files
// of lib/topology/kinds/ (compiled: dist/lib/topology/kinds/), each named by its
// file name — and looking one up. There is no list to keep: adding a kind is
// adding a file (lib/topology/define-kind.ts says what it exports).
//
// Topology files are loaded synchronously (lib/config/load.ts loadTopology), and
// the schema, Machine and the CCL worlds ask a kind synchronously. So this
// module imports every file of the folder once, with a top-level await, while
// it loads: every module that imports it (statically) runs after the kinds are
// in. Decision 0018 weighs the alternatives.
import { readdirSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KernbenchError } from '../errors.js';
import { isSipTopology, type SipTopology, type SipTopologyKind } from './define-kind.js';

const KINDS_DIR = new URL('./kinds/', import.meta.url);

/** Sources run as .ts (tsx), the build as .js: list the files of this module's own kind. */
const MODULE_EXT = extname(fileURLToPath(import.meta.url));

/** File names (without extension) of the kinds folder, sorted. */
function kindFileNames(): string[] {
  return readdirSync(KINDS_DIR)
    .filter((f) => extname(f) === MODULE_EXT && !f.endsWith(`.d${MODULE_EXT}`))
    .map((f) => f.slice(0, -MODULE_EXT.length))
    .sort();
}

async function loadKind(file: string): Promise<SipTopology> {
  const url = new URL(`${file}${MODULE_EXT}`, KINDS_DIR);
  const mod = (await import(url.href)) as Record<string, unknown>;
  const path = fileURLToPath(url);
  if (!isSipTopology(mod.kind)) {
    const found = Object.keys(mod).sort();
    throw new KernbenchError('ERR_MODULE_EXPORT', `${path} is not a SIP topology kind module: kind: missing or not made with defineSipTopology. Expected exports: kind (defineSipTopology({name, summary, grid, hops, neighbour})); found: ${found.length ? found.join(', ') : 'none'}`);
  }
  if (mod.kind.name !== file) {
    throw new KernbenchError('ERR_MODULE_DEFINITION', `${path}: a kind is named after its file, expected name '${file}', got '${mod.kind.name}'`);
  }
  return mod.kind;
}

const KINDS: ReadonlyMap<string, SipTopology> = new Map((await Promise.all(kindFileNames().map(loadKind))).map((k) => [k.name, k]));

/**
 * A user's own kind, named by path in a topology file (`system.sips.topology:
 * ./my_kind.ts`); the loaded topology carries the module's file URL, and each
 * thread imports it (lib/loader/topology-kind.ts) and registers it here before
 * it builds a Machine. Keyed by that URL, so two users' kinds of one name
 * cannot meet.
 */
export type KindModuleUrl = `file:${string}`;
const USER_KINDS = new Map<string, SipTopology>();

/** A kind named by path rather than by name: a relative or absolute file path or URL, or a module file name. */
export function isKindModulePath(name: string): boolean {
  return /[\\/]|\.(?:m?ts|m?js)$/.test(name);
}

/** Record the kind of the module at file URL `url` on this thread (the loader calls this once it checked the module). */
export function registerSipKind(url: KindModuleUrl, kind: SipTopology): void {
  USER_KINDS.set(url, kind);
}

/** Names of the shipped kinds, sorted (the file names of lib/topology/kinds/). */
export function sipKindNames(): SipTopologyKind[] {
  return [...KINDS.keys()] as SipTopologyKind[];
}

/** Every shipped kind, in name order. */
export function sipKinds(): SipTopology[] {
  return [...KINDS.values()];
}

/** Kind `name` (a shipped name, or the URL of a user's kind module loaded on this thread), or undefined when there is none. */
export function findSipKind(name: string): SipTopology | undefined {
  return KINDS.get(name) ?? USER_KINDS.get(name);
}

/** Kind `name`; ERR_UNKNOWN_TOPOLOGY_KIND listing the known kinds when there is none. */
export function sipKind(name: string): SipTopology {
  const k = findSipKind(name);
  if (k !== undefined) return k;
  if (name.startsWith('file:')) throw new KernbenchError('ERR_UNKNOWN_TOPOLOGY_KIND', `the SIP topology kind module ${fileURLToPath(name)} is not loaded on this thread (lib/loader/topology-kind.ts loads it), got '${name}'`);
  throw new KernbenchError('ERR_UNKNOWN_TOPOLOGY_KIND', `unknown SIP topology kind; expected one of ${sipKindNames().join('|')}, got '${name}'`);
}
